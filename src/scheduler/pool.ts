/**
 * The worker pool: slots and dispatch. N slots claim WAITING members from the
 * service and hand each claim to the one run path (./run.ts): a single member
 * to a slot (./slot.ts), which runs its members one after another; a batched
 * member to a share of its batch (./batch-share.ts), which runs in one executor
 * call with as many slots as it gets. Every lease the pool holds is kept alive
 * by one LeaseKeeper, and every write is fenced by the lease the claim returned.
 *
 * Wake-ups, not sleep-polling: the pool claims as soon as the service says runs
 * are waiting (in-process event, or LISTEN/NOTIFY on PostgreSQL), and on a slow
 * safety poll that also reaps expired leases.
 */
import { randomUUID } from 'node:crypto';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ClaimedRun } from '../core/types.js';
import type { ReapResult } from '../store/store.js';
import type { WorkerLink } from '../worker-link/link.js';
import { holdShare } from './batch-share.js';
import { claimedLate, giveBack, type Claim } from './claims.js';
import { stopCancelledMembers, type InFlight } from './inflight.js';
import { LeaseKeeper } from './lease-keeper.js';
import { OutcomeWriter } from './outcome-writer.js';
import { runMembers, type RunDeps } from './run.js';
import type { PeerWorker } from './shares.js';
import { holdAheadMs, runSlot, type SlotDeps } from './slot.js';
import { WebServerGate } from './webserver-gate.js';

/** What the pool's runs run with (see RunDeps), and its own settings. */
export interface WorkerPoolOptions extends Pick<RunDeps, 'executors' | 'resolveVariables' | 'outboundPolicy' | 'artifacts' | 'logger' | 'metrics' | 'suites' | 'testUsers'> {
  /** The service, as a worker sees it. */
  link: WorkerLink;
  /** How long a claim stays ours without a heartbeat. */
  leaseMs: number;
  concurrency: number;
  /** Sends members whose leases expired back (ClaimsStore.reapExpired), on every safety poll; a worker that holds no store leaves it to the service. */
  reap?: () => Promise<ReapResult>;
  /** Safety poll and reaper period. */
  pollMs: number;
  workerId?: string;
  /** Batches' scratch folders go under this one (default: the system temp folder). */
  workDir?: string;
  /** Every live worker process with what it holds of a batch (the workers registry); default: this pool alone. */
  peers?: (setId: string, batchKey: string) => Promise<PeerWorker[]>;
  /** Most expected work per slot one share of a batch holds while others can help (batchShare); default DEFAULT_MAX_SHARE_MS. */
  maxShareMs?: number;
}

export class WorkerPool {
  readonly workerId: string;
  private readonly inflight = new Map<string, InFlight>();
  /** Every slot's and batch's promise, for shutdown to wait on. */
  private readonly tasks = new Set<Promise<unknown>>();
  /** Slots in use: one per single member, a batch's parallelism for a batch. */
  private slots = 0;
  private stopping = false;
  private filling = false;
  private refill = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private stopCancels: (() => void) | undefined;
  private readonly outcomes: OutcomeWriter;
  private readonly gate: WebServerGate;
  /** What every run (a slot's member, a share) runs with. */
  private readonly run: RunDeps;
  private readonly slot: SlotDeps;
  private readonly late = (askedAt: number, runs: number) => claimedLate(askedAt, runs, this.opts.leaseMs, this.opts.logger);
  private readonly giveBack = (runs: ClaimedRun[]) => giveBack(this.opts.link, runs, this.opts.logger);

  constructor(private readonly opts: WorkerPoolOptions) {
    this.workerId = opts.workerId ?? `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
    this.outcomes = new OutcomeWriter(opts.link, opts.logger, opts.leaseMs, opts.metrics);
    this.gate = new WebServerGate(() => void (this.stopping || this.fill()), opts.logger);
    this.run = {
      ...opts,
      keeper: new LeaseKeeper(opts.link, opts.leaseMs, opts.logger),
      workRoot: opts.workDir ?? path.join(tmpdir(), 'runset-work'),
      inflight: this.inflight,
    };
    this.slot = {
      ...opts,
      outcomes: this.outcomes,
      workerId: this.workerId,
      holdAheadMs: holdAheadMs(opts.leaseMs),
      skipBatchKeys: () => this.gate.skipped,
      stopping: () => this.stopping,
      late: this.late,
      giveBack: this.giveBack,
      track: (task) => this.track(task),
      run: (req) => runMembers(req, this.run),
    };
  }

  /** Slots in use now (a batch counts its parallelism), for the metrics. */
  get busySlots(): number {
    return this.slots;
  }

  start(): void {
    void this.gate.start();
    this.unsubscribe = this.opts.link.onRunsWaiting(() => void this.fill());
    this.stopCancels = stopCancelledMembers(this.opts.link, this.inflight, this.opts.logger);
    this.pollTimer = setInterval(() => void this.tick(), this.opts.pollMs);
    this.pollTimer.unref();
    void this.tick();
  }

  /**
   * Stops claiming, lets in-flight runs finish within `graceMs`, then aborts the
   * rest and gives them back to WAITING for another worker.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.gate.stop();
    this.unsubscribe?.();
    this.stopCancels?.();
    clearInterval(this.pollTimer);
    const all = () => Promise.all([...this.tasks]);
    if (this.tasks.size > 0 && graceMs > 0) {
      await Promise.race([all(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    }
    const left = [...this.inflight.values()];
    for (const f of left) f.abort.abort('shutdown');
    await all();
    if (left.length > 0) {
      const released = await this.opts.link.releaseRuns(left.map((f) => f.lease));
      this.opts.logger.info({ released }, 'released unfinished runs back to WAITING');
    }
  }

  /** Keeps a slot's or batch's promise until it settles, for shutdown to wait on. */
  private track(task: Promise<unknown>): void {
    this.tasks.add(task);
    void task.finally(() => this.tasks.delete(task));
  }

  private async tick(): Promise<void> {
    if (this.stopping) return;
    if (this.opts.reap) {
      try {
        const reaped = await this.opts.reap();
        if (reaped.requeued + reaped.failed > 0) this.opts.logger.warn(reaped, 'reaped expired leases');
      } catch (err) {
        this.opts.logger.warn({ err }, 'reaping expired leases failed; will retry');
      }
    }
    await this.fill();
  }

  /** Claims until every slot is busy or nothing waits. Re-entrant calls coalesce into one more round. */
  private async fill(): Promise<void> {
    if (this.filling) {
      this.refill = true;
      return;
    }
    this.filling = true;
    try {
      do {
        this.refill = false;
        while (!this.stopping && this.slots < this.opts.concurrency) {
          const askedAt = performance.now();
          const claimed = await this.opts.link.claimRuns({
            workerId: this.workerId,
            limit: this.opts.concurrency - this.slots,
            leaseMs: this.opts.leaseMs,
            skipBatchKeys: this.gate.skipped,
          });
          if (claimed.length === 0) break;
          await this.dispatch({ runs: claimed, askedAt });
        }
      } while (this.refill && !this.stopping);
    } catch (err) {
      this.opts.logger.warn({ err }, 'claiming runs failed; will retry on the next wake-up or poll');
    } finally {
      this.filling = false;
    }
  }

  /**
   * Hands what a claim returned to the run path: single members one slot each,
   * batched ones grouped by set and batch key, a share each. Not when shutdown
   * began meanwhile, nor when the answer came so late that the leases may
   * already have expired (this process was frozen or starved, and another
   * worker may be running them): those go straight back.
   */
  private async dispatch({ runs, askedAt }: Claim): Promise<void> {
    if (runs.length === 0) return;
    if (this.stopping || this.late(askedAt, runs.length)) {
      await this.giveBack(runs);
      return;
    }
    const batches = new Map<string, ClaimedRun[]>();
    for (const run of runs) {
      if (run.batchKey === null) this.launchSlot(run);
      else {
        const key = JSON.stringify([run.setId, run.batchKey]);
        batches.set(key, [...(batches.get(key) ?? []), run]);
      }
    }
    for (const runs of batches.values()) await this.launchShare(runs);
  }

  /** One slot, from this member on (see runSlot); a batched member it claimed is dispatched when it ends. */
  private launchSlot(run: ClaimedRun): void {
    this.slots++;
    const slot = runSlot(run, this.slot).then(
      async (exit) => {
        this.slots--;
        if (exit.why === 'batch') await this.dispatch(exit.claim);
        else if (!this.stopping) void this.fill();
      },
      (err: unknown) => {
        this.slots--;
        this.opts.logger.error({ err, run: run.id }, 'a worker slot failed unexpectedly');
      },
    );
    this.track(slot);
  }

  /**
   * Members of one set with one batch key, claimed reserved: this worker's
   * share of their batch (see holdShare), run in one executor call with as
   * many slots as the suite asks for and as are free.
   */
  private async launchShare(claimed: ClaimedRun[]): Promise<void> {
    const head = claimed[0] as ClaimedRun;
    const share = await holdShare(claimed, this.opts.concurrency - this.slots, {
      link: this.opts.link, gate: this.gate, maxShareMs: this.opts.maxShareMs, me: { id: this.workerId, host: hostname() }, peers: this.opts.peers,
      leaseMs: this.opts.leaseMs, logger: this.opts.logger, giveBack: this.giveBack,
    });
    if (!share) return;
    const { runs, slots, lock } = share;
    const free = this.opts.concurrency - this.slots; // other launches may have taken slots while we claimed
    if (free <= 0) {
      lock.release();
      return this.giveBack(runs);
    }
    const parallelism = Math.min(slots, runs.length, free);
    this.slots += parallelism;
    const done = runMembers({ runs, parallelism, abort: new AbortController(), finish: (run, outcome) => this.outcomes.finish(run, outcome) }, this.run)
      .catch((err: unknown) => this.opts.logger.error({ err, run: head.id }, 'running a batch failed unexpectedly'))
      .finally(() => {
        lock.release(); // Playwright and its webServer have exited
        this.slots -= parallelism;
        if (!this.stopping) void this.fill();
      });
    this.track(done);
  }
}
