/**
 * The worker pool: N slots that claim WAITING members from the store, run them
 * through their executor, and write the outcome — every write fenced by the
 * lease the claim returned.
 *
 * Wake-ups, not sleep-polling: the pool claims as soon as the store says runs
 * are waiting (in-process event, or LISTEN/NOTIFY on PostgreSQL), and on a slow
 * safety poll that also reaps expired leases.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism, hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { ArtifactSaver } from '../artifacts/save.js';
import type { ClaimedRun, Executor, RunOutcome, TestType } from '../core/types.js';
import { isStoreUnavailable, leaseOf, type ClaimRequest, type LeaseRef, type Store } from '../store/store.js';
import { runMember, type ResolveVariables } from './run-member.js';
import { runBatch } from './run-batch.js';

/** Most members one batch takes: enough for one Playwright process per suite, few enough to heartbeat cheaply. */
const MAX_BATCH = 256;

export interface WorkerPoolOptions {
  store: Store;
  executors: ReadonlyMap<TestType, Executor>;
  resolveVariables: ResolveVariables;
  logger: Logger;
  concurrency: number;
  /** How long a claim stays ours without a heartbeat. */
  leaseMs: number;
  /** Leases a member may lose (worker gone) before it ends FAIL. */
  maxLostLeases: number;
  /** Safety poll and reaper period. */
  pollMs: number;
  workerId?: string;
  /** Where batch executors' files become stored artifacts; without it they are not kept. */
  artifacts?: ArtifactSaver;
  /** Batches' scratch folders go under this one (default: the system temp folder). */
  workDir?: string;
}

/** What a claim returned, and when it was asked for (performance.now()). */
interface Claim {
  runs: ClaimedRun[];
  askedAt: number;
}

interface InFlight {
  lease: LeaseRef;
  abort: AbortController;
  done: Promise<void>;
}

export class WorkerPool {
  readonly workerId: string;
  private readonly inflight = new Map<string, InFlight>();
  /** Slots in use: one per single member, a batch's parallelism for a batch. */
  private slots = 0;
  private stopping = false;
  private filling = false;
  private refill = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly opts: WorkerPoolOptions) {
    this.workerId = opts.workerId ?? `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  }

  get running(): number {
    return this.inflight.size;
  }

  start(): void {
    this.unsubscribe = this.opts.store.onRunsWaiting(() => void this.fill());
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
    this.unsubscribe?.();
    clearInterval(this.pollTimer);
    const all = () => Promise.all([...this.inflight.values()].map((f) => f.done));
    if (this.inflight.size > 0 && graceMs > 0) {
      await Promise.race([all(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    }
    const left = [...this.inflight.values()];
    for (const f of left) f.abort.abort('shutdown');
    await all();
    if (left.length > 0) {
      const released = await this.opts.store.releaseRuns(left.map((f) => f.lease));
      this.opts.logger.info({ released }, 'released unfinished runs back to WAITING');
    }
  }

  private async tick(): Promise<void> {
    if (this.stopping) return;
    try {
      const reaped = await this.opts.store.reapExpired(this.opts.maxLostLeases);
      if (reaped.requeued + reaped.failed > 0) this.opts.logger.warn(reaped, 'reaped expired leases');
    } catch (err) {
      this.opts.logger.warn({ err }, 'reaping expired leases failed; will retry');
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
          const claimed = await this.opts.store.claimRuns({
            workerId: this.workerId,
            limit: this.opts.concurrency - this.slots,
            leaseMs: this.opts.leaseMs,
          });
          if (claimed.length === 0) break;
          await this.runClaimed({ runs: claimed, askedAt });
        }
      } while (this.refill && !this.stopping);
    } catch (err) {
      this.opts.logger.warn({ err }, 'claiming runs failed; will retry on the next wake-up or poll');
    } finally {
      this.filling = false;
    }
  }

  /**
   * Runs what a claim returned: single members one slot each, batched ones
   * grouped by set and batch key. Not when shutdown began meanwhile, nor when
   * the answer came so late that the leases may already have expired (this
   * process was frozen or starved, and another worker may be running them):
   * those go straight back.
   */
  private async runClaimed({ runs, askedAt }: Claim): Promise<void> {
    if (runs.length === 0) return;
    const late = performance.now() - askedAt >= this.opts.leaseMs;
    if (this.stopping || late) {
      if (late) this.opts.logger.warn({ runs: runs.length }, 'a claim was answered after its lease could have expired; giving it back instead of running it');
      await this.giveBack(runs);
      return;
    }
    const batches = new Map<string, ClaimedRun[]>();
    for (const run of runs) {
      if (run.batchKey === null) this.launch(run);
      else {
        const key = JSON.stringify([run.setId, run.batchKey]);
        batches.set(key, [...(batches.get(key) ?? []), run]);
      }
    }
    for (const runs of batches.values()) await this.launchBatch(runs);
  }

  /** Releases claimed runs for any worker to take (release wakes the workers). */
  private async giveBack(runs: ClaimedRun[]): Promise<void> {
    await this.opts.store.releaseRuns(runs.map(leaseOf)).catch((err: unknown) => {
      this.opts.logger.warn({ err }, 'giving back claimed runs failed; their leases will expire');
    });
  }

  /**
   * One slot: runs the member, then writes its outcome and claims the slot's next
   * member in one store call, so that going from one member to the next costs a
   * single round trip. When that call claimed nothing, nothing was waiting.
   */
  private launch(run: ClaimedRun): void {
    const lease = leaseOf(run);
    const abort = new AbortController();
    this.slots++;
    const done = this.execute(run, lease, abort).then(async (next) => {
      this.slots--;
      this.inflight.delete(run.id);
      if (next === undefined) {
        if (!this.stopping) void this.fill();
      } else {
        await this.runClaimed(next);
      }
    });
    this.inflight.set(run.id, { lease, abort, done });
  }

  /**
   * Members of one set with one batch key, claimed reserved: takes the rest of
   * the batch too, and runs it in one executor call with as many slots as the
   * suite asks for (its `workers`, default half the cores, as Playwright does)
   * and as are free.
   */
  private async launchBatch(claimed: ClaimedRun[]): Promise<void> {
    const head = claimed[0] as ClaimedRun;
    if (this.slots >= this.opts.concurrency) {
      // An earlier batch of the same claim took the free slots: this one waits its turn.
      await this.giveBack(claimed);
      return;
    }
    const more = await this.opts.store
      .claimBatch({ workerId: this.workerId, setId: head.setId, batchKey: head.batchKey as string, limit: MAX_BATCH - claimed.length, leaseMs: this.opts.leaseMs })
      .catch((err: unknown) => {
        // What is already claimed still runs; the rest waits for the next claim.
        this.opts.logger.warn({ err, run: head.id }, 'claiming the rest of a batch failed');
        return [];
      });
    const runs = [...claimed, ...more];
    const free = this.opts.concurrency - this.slots; // other launches may have taken slots while we claimed
    if (free <= 0) {
      await this.giveBack(runs);
      return;
    }
    const wanted = head.spec.type === 'playwright' ? (head.spec.workers ?? Math.max(1, Math.floor(availableParallelism() / 2))) : 1;
    const parallelism = Math.min(wanted, runs.length, free);
    const abort = new AbortController();
    this.slots += parallelism;
    const done = runBatch(runs, parallelism, abort, {
      store: this.opts.store,
      executor: this.opts.executors.get(head.spec.type),
      resolveVariables: this.opts.resolveVariables,
      artifacts: this.opts.artifacts,
      logger: this.opts.logger,
      leaseMs: this.opts.leaseMs,
      workRoot: this.opts.workDir ?? path.join(tmpdir(), 'runset-work'),
      finish: (lease, outcome) => this.finish(lease, outcome),
      settled: (runId) => this.inflight.delete(runId),
    })
      .catch((err: unknown) => this.opts.logger.error({ err, run: head.id }, 'running a batch failed unexpectedly'))
      .finally(() => {
        this.slots -= parallelism;
        for (const run of runs) this.inflight.delete(run.id);
        if (!this.stopping) void this.fill();
      });
    for (const run of runs) this.inflight.set(run.id, { lease: leaseOf(run), abort, done });
  }

  /** Runs one member and writes its outcome; returns what was claimed with the write, or undefined when no claim was made. */
  private async execute(run: ClaimedRun, lease: LeaseRef, abort: AbortController): Promise<Claim | undefined> {
    const { store, leaseMs, logger } = this.opts;
    let attempts = 0;
    let writing = false;
    const heartbeat = setInterval(() => {
      store.heartbeat(lease, leaseMs, attempts).then(
        (ours) => {
          if (ours || abort.signal.aborted) return;
          // While the outcome is being written the row may already have ended: no news then.
          if (!writing) logger.warn({ run: run.id, claim: lease.claim }, 'lease lost: another worker took the member over; stopping it');
          abort.abort('lease lost');
        },
        (err: unknown) => logger.warn({ err, run: run.id }, 'heartbeat failed; will retry'),
      );
    }, Math.max(50, Math.floor(leaseMs / 3)));
    try {
      const outcome = await runMember(run, {
        executors: this.opts.executors,
        resolveVariables: this.opts.resolveVariables,
        signal: abort.signal,
        onAttempt: (n) => (attempts = n),
      });
      if (abort.signal.aborted) return undefined; // shutdown releases it; a lost lease belongs to someone else now
      writing = true;
      if (this.stopping) {
        await this.finish(lease, outcome);
        return undefined;
      }
      const next: ClaimRequest = { workerId: this.workerId, limit: 1, leaseMs };
      const askedAt = performance.now();
      const step = await this.retryWhileLeased(lease, () => this.opts.store.finishAndClaim(lease, outcome, next));
      if (!step.finished) logger.warn({ run: lease.runId }, 'lease was taken over; outcome discarded');
      return { runs: step.claimed, askedAt };
    } catch (err) {
      logger.error({ err, run: run.id }, 'running a member failed unexpectedly');
      return undefined;
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Writes the outcome. False: the lease is not ours. */
  private async finish(lease: LeaseRef, outcome: RunOutcome): Promise<boolean> {
    const ours = await this.retryWhileLeased(lease, () => this.opts.store.finishRun(lease, outcome));
    if (!ours) this.opts.logger.warn({ run: lease.runId }, 'lease was taken over; outcome discarded');
    return ours;
  }

  /**
   * Retries an outcome write while the store is unavailable (and only then: any
   * other error is a bug or a refused move, which trying again cannot mend), with
   * jittered backoff, for as long as our lease can still be valid.
   */
  private async retryWhileLeased<T>(lease: LeaseRef, write: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.opts.leaseMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await write();
      } catch (err) {
        if (!isStoreUnavailable(err) || Date.now() > deadline) throw err;
        const backoff = Math.min(2000, 50 * 2 ** attempt) * (0.5 + Math.random() / 2);
        this.opts.logger.warn({ err, run: lease.runId }, 'writing an outcome failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, backoff));
      }
    }
  }
}
