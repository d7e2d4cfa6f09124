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
import type { ArtifactSaver } from '../artifacts/save.js';
import type { ClaimedRun, RunOutcome } from '../core/types.js';
import { leaseOf, type FinishedAndClaimed, type NextClaim, type ReapResult } from '../store/store.js';
import { runUnderLease, type LeasedRunDeps } from './leased-run.js';
import { runBatch } from './run-batch.js';
import { Reservation } from './reservation.js';
import { OutcomeWriter } from './outcomes.js';
import { DEFAULT_MAX_SHARE_MS, takeShare } from './batch-share.js';
import { stopCancelledMembers, type InFlight } from './inflight.js';
import type { PeerWorker } from './shares.js';
import { WebServerGate } from './webserver-gate.js';

/** Most members one batch takes: enough for one Playwright process per suite, few enough to heartbeat cheaply. */
const MAX_BATCH = 256;

/**
 * A slot reserves its next member only while its members are shorter than
 * this, and holds a reservation at most this long (a quarter of the lease at
 * most) while its current member runs; then it gives it back for any slot to
 * take. So a reservation keeps a member from an idle worker for no longer than this.
 */
const HOLD_AHEAD_MS = 100;

/** What the pool's slots run with (LeasedRunDeps: the link, executors, logger, lease, metrics), and its own settings. */
export interface WorkerPoolOptions extends LeasedRunDeps {
  concurrency: number;
  /** Sends members whose leases expired back (Store.reapExpired), on every safety poll; a worker that holds no store leaves it to the service. */
  reap?: () => Promise<ReapResult>;
  /** Safety poll and reaper period. */
  pollMs: number;
  workerId?: string;
  /** Where batch executors' files become stored artifacts; without it they are not kept. */
  artifacts?: ArtifactSaver;
  /** Batches' scratch folders go under this one (default: the system temp folder). */
  workDir?: string;
  /** Every live worker process with what it holds of a batch (the workers registry); default: this pool alone. */
  peers?: (setId: string, batchKey: string) => Promise<PeerWorker[]>;
  /** Most expected work per slot one share of a batch holds while others can help (batchShare); default DEFAULT_MAX_SHARE_MS. */
  maxShareMs?: number;
}

/** What a claim returned, and when it was asked for (performance.now()). */
interface Claim {
  runs: ClaimedRun[];
  askedAt: number;
}

/** A slot's write between two members (Store.finishAndClaim), and when it was asked for. */
interface Step extends FinishedAndClaimed {
  askedAt: number;
}

/** A slot's member, run: what to write, and the member reserved for the slot's next turn (taken). */
interface Turn {
  /** Undefined when nothing is to be written: the member was aborted (shutdown, lost lease) or crashed. */
  outcome: RunOutcome | undefined;
  next: { run: ClaimedRun; askedAt: number } | undefined;
  /** Stops the member's heartbeat and forgets it: call once its outcome is written (or will not be). */
  done: () => void;
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
  private readonly holdAheadMs: number;
  private readonly outcomes: OutcomeWriter;
  private readonly gate: WebServerGate;

  constructor(private readonly opts: WorkerPoolOptions) {
    this.workerId = opts.workerId ?? `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
    this.holdAheadMs = Math.min(HOLD_AHEAD_MS, opts.leaseMs / 4);
    this.outcomes = new OutcomeWriter(opts.link, opts.logger, opts.leaseMs, opts.metrics);
    this.gate = new WebServerGate(() => void (this.stopping || this.fill()), opts.logger);
  }

  /** Slots in use now (a batch counts its parallelism), for the metrics. */
  get busySlots(): number {
    return this.slots;
  }

  start(): void {
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
    if (this.stopping || this.late(askedAt, runs.length)) {
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

  /** True (and said) when a claim asked for at `askedAt` may have outlived its lease. */
  private late(askedAt: number, runs: number): boolean {
    const late = performance.now() - askedAt >= this.opts.leaseMs;
    if (late) this.opts.logger.warn({ runs }, 'a claim was answered after its lease could have expired; giving it back instead of running it');
    return late;
  }

  /** Releases claimed runs for any worker to take (release wakes the workers). */
  private async giveBack(runs: ClaimedRun[]): Promise<void> {
    if (runs.length === 0) return;
    await this.opts.link.releaseRuns(runs.map(leaseOf)).catch((err: unknown) => {
      this.opts.logger.warn({ err }, 'giving back claimed runs failed; their leases will expire');
    });
  }

  /** One slot, from this member on (see runSlot); what it could not run itself goes to runClaimed when it ends. */
  private launch(run: ClaimedRun): void {
    this.slots++;
    const slot = this.runSlot(run).then(
      async (handOff) => {
        this.slots--;
        if (handOff) await this.runClaimed(handOff);
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
   * One slot's members, one after another. Between two members the slot makes
   * one store call (finishAndClaim): it writes the outcome and claims the next
   * member. While members are short (HOLD_AHEAD_MS), that call also reserves
   * the member after the next, so that one starts the moment its predecessor
   * ends, and the write that records its start goes on beside it instead of
   * before it: a member still starts only once its claim is in the store, but
   * the round trip is off the slot's path (see runTurn).
   *
   * Returns claimed batched members, which a slot does not run (runClaimed does).
   */
  private async runSlot(first: ClaimedRun): Promise<Claim | undefined> {
    let run = first;
    /** The write that started `run` and reserved the slot's next member (settled at once when a plain claim started it). */
    let begun: Promise<Step> | undefined;
    for (;;) {
      const { outcome, next, done } = await this.runTurn(run, begun);
      if (outcome === undefined) {
        // Shutdown gives it back; a lost lease belongs to someone else now; a crash leaves it to the reaper.
        done();
        if (next) await this.giveBack([next.run]);
        return undefined;
      }
      if (this.stopping || next?.run.batchKey) {
        await this.outcomes.finish(run, outcome).finally(done);
        // A batched member goes to its batch (runClaimed gives it back if shutdown began).
        return next && { runs: [next.run], askedAt: next.askedAt };
      }

      const reserve = outcome.durationMs < this.holdAheadMs ? 1 : 0;
      if (next) {
        begun = this.step(run, outcome, { limit: reserve, reserve, start: leaseOf(next.run) }).finally(done);
        run = next.run;
        continue;
      }
      const step = await this.step(run, outcome, { limit: 1 + reserve, reserve }).finally(done);
      const [started, ...reserved] = step.claimed;
      if (started === undefined) return undefined;
      if (started.batchKey !== null) {
        // Claimed reserved, as batched members are: its batch runs it. What was reserved for this slot goes back.
        await this.giveBack(reserved);
        return { runs: [started], askedAt: step.askedAt };
      }
      if (this.stopping || this.late(step.askedAt, step.claimed.length)) {
        await this.giveBack(step.claimed);
        return undefined;
      }
      run = started;
      begun = Promise.resolve({ ...step, started: true, claimed: reserved });
    }
  }

  /**
   * One member of a slot: runs it and, when it was started from a reservation,
   * awaits the write that recorded its start (`begun`) beside it. A start the
   * store refused (the reservation was lost, say after this process was frozen)
   * stops the member. The reservation that write made is held for the slot's
   * next turn (see Reservation) and taken when this member ends.
   */
  private async runTurn(run: ClaimedRun, begun: Promise<Step> | undefined): Promise<Turn> {
    const lease = leaseOf(run);
    const abort = new AbortController();
    this.inflight.set(run.id, { setId: run.setId, lease, abort });
    const execution = runUnderLease(run, lease, abort, this.opts);
    let ahead: Reservation | undefined;
    if (begun) {
      const step = await begun;
      if (!step.started) abort.abort('lease lost');
      const [reserved] = step.claimed;
      if (reserved) ahead = new Reservation(reserved, step.askedAt, this.holdAheadMs, (r) => this.track(this.giveBack([r])));
    }
    const outcome = await execution.outcome;
    const next = ahead?.take(this.opts.leaseMs);
    if (ahead?.late) this.opts.logger.warn({ run: ahead.runId }, 'a reservation was taken up too late to trust its lease; giving it back instead of running it');
    return {
      outcome: abort.signal.aborted ? undefined : outcome,
      next: next && ahead && { run: next, askedAt: ahead.askedAt },
      done: () => {
        execution.settled();
        this.inflight.delete(run.id);
      },
    };
  }

  /** Writes a slot's outcome, starts its reserved member and claims on, in one store call (see OutcomeWriter.write). */
  private async step(run: ClaimedRun, outcome: RunOutcome, claim: Omit<NextClaim, 'workerId' | 'leaseMs'>): Promise<Step> {
    const askedAt = performance.now();
    const next: NextClaim = { ...claim, workerId: this.workerId, leaseMs: this.opts.leaseMs, skipBatchKeys: this.gate.skipped };
    // A retry claims nothing: the first try may have committed with its answer lost, and
    // claiming again would strand what it claimed (until its lease expires). A start repeats safely.
    const written = await this.outcomes.write(run, outcome, (retry) =>
      this.opts.link.finishAndClaim(leaseOf(run), outcome, run, retry ? { ...next, limit: 0, reserve: 0 } : next),
    );
    return { ...(written ?? { finished: false, started: false, claimed: [] }), askedAt };
  }

  /**
   * Members of one set with one batch key, claimed reserved: takes the host's
   * locks on the suite's webServer ports (WebServerGate; one held by another
   * batch here: the members go back), then this worker's share of the batch
   * (see batchShare: all of it when no other worker can help) and runs it in
   * one executor call with as many slots as the suite asks for (its `workers`,
   * default half the cores, as Playwright does) and as are free. What the claim
   * took beyond the share goes back for other slots and workers.
   */
  private async launchBatch(claimed: ClaimedRun[]): Promise<void> {
    const head = claimed[0] as ClaimedRun;
    const wanted = head.spec.type === 'playwright' ? (head.spec.workers ?? Math.max(1, Math.floor(availableParallelism() / 2))) : 1;
    const slots = Math.min(wanted, this.opts.concurrency - this.slots);
    // No free slot (an earlier batch of the same claim took them) or the webServer's port busy here: it waits its turn.
    const lock = slots > 0 ? await this.gate.enter(head) : undefined;
    if (!lock) return this.giveBack(claimed);
    const runs = await takeShare(this.opts.link, claimed, {
      slots, wanted, maxShareMs: this.opts.maxShareMs ?? DEFAULT_MAX_SHARE_MS, limit: MAX_BATCH,
      me: { id: this.workerId, host: hostname() }, peers: this.opts.peers,
    }, { leaseMs: this.opts.leaseMs, logger: this.opts.logger, giveBack: (r) => this.giveBack(r) });
    const free = this.opts.concurrency - this.slots; // other launches may have taken slots while we claimed
    if (free <= 0) {
      lock.release();
      return this.giveBack(runs);
    }
    const parallelism = Math.min(slots, runs.length, free);
    const abort = new AbortController();
    this.slots += parallelism;
    const done = runBatch(runs, parallelism, abort, {
      link: this.opts.link,
      executor: this.opts.executors.get(head.spec.type),
      resolveVariables: this.opts.resolveVariables,
      artifacts: this.opts.artifacts,
      logger: this.opts.logger,
      leaseMs: this.opts.leaseMs,
      workRoot: this.opts.workDir ?? path.join(tmpdir(), 'runset-work'),
      finish: (run, outcome) => this.outcomes.finish(run, outcome),
      settled: (runId) => this.inflight.delete(runId),
      metrics: this.opts.metrics,
    })
      .catch((err: unknown) => this.opts.logger.error({ err, run: head.id }, 'running a batch failed unexpectedly'))
      .finally(() => {
        lock.release(); // Playwright and its webServer have exited
        this.slots -= parallelism;
        for (const run of runs) this.inflight.delete(run.id);
        if (!this.stopping) void this.fill();
      });
    this.track(done);
    for (const run of runs) this.inflight.set(run.id, { setId: run.setId, lease: leaseOf(run), abort });
  }
}
