/**
 * Writing a member's outcome, for single members and batches alike: retried
 * while the store is out of reach (and only then) for as long as the lease can
 * still be valid, and — once written — a successful duration handed to the
 * test's history (Store.recordDurations), gathered for a second so that a
 * busy worker makes one history write a second rather than one a member; a
 * failure checked against its set's maxFailures (fail fast).
 */
import type { Logger } from 'pino';
import type { ClaimedRun, DurationSample, RunOutcome } from '../core/types.js';
import { isStoreUnavailable, leaseOf, type Store } from '../store/store.js';
import { enforceMaxFailures } from '../sets/cancel.js';
import type { WorkerMetrics } from './worker-metrics.js';

/** How long successful durations gather before they are written to the history together. */
const HISTORY_FLUSH_MS = 1000;

export class OutcomeWriter {
  private samples: DurationSample[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly leaseMs: number,
    private readonly metrics?: WorkerMetrics,
  ) {}

  /** Writes the outcome alone (Store.finishRun). False: it was not written. */
  async finish(run: ClaimedRun, outcome: RunOutcome): Promise<boolean> {
    const written = await this.write(run, outcome, async () => ({ finished: await this.store.finishRun(leaseOf(run), outcome) }));
    return written?.finished ?? false;
  }

  /**
   * Writes an outcome through `write` (which may do more in the same store
   * call, and is told when it is a retry). Retries while the store is
   * unavailable — any other error is a bug or a refused move, which trying again
   * cannot mend — with jittered backoff, while the lease can still be valid.
   * Says so when the lease was not ours; when the write fails for good, says so
   * and answers undefined: the outcome is lost, and the reaper requeues the
   * member when its lease expires.
   */
  async write<T extends { finished: boolean }>(run: ClaimedRun, outcome: RunOutcome, write: (retry: boolean) => Promise<T>): Promise<T | undefined> {
    const deadline = Date.now() + this.leaseMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const written = await write(attempt > 0);
        if (!written.finished) this.logger.warn({ run: run.id }, 'lease was taken over; outcome discarded');
        else if (outcome.status === 'SUCCESS') this.remember({ env: run.env, name: run.spec.name, ms: outcome.durationMs });
        else this.failFast(run);
        if (written.finished) this.metrics?.memberEnded(run, outcome);
        return written;
      } catch (err) {
        if (!isStoreUnavailable(err) || Date.now() > deadline) {
          this.logger.error({ err, run: run.id }, 'writing an outcome failed; the member will be requeued when its lease expires');
          return undefined;
        }
        const backoff = Math.min(2000, 50 * 2 ** attempt) * (0.5 + Math.random() / 2);
        this.logger.warn({ err, run: run.id }, 'writing an outcome failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, backoff));
      }
    }
  }

  /** Writes the durations gathered so far (on shutdown, so none is left behind). */
  async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const samples = this.samples.splice(0);
    if (samples.length > 0) {
      this.flushing = this.flushing.then(() =>
        this.store.recordDurations(samples).catch((err: unknown) => {
          // History only orders and shares future sets; losing a second of it costs nothing else.
          this.logger.warn({ err, samples: samples.length }, 'recording test durations failed; they are left out of the history');
        }),
      );
    }
    await this.flushing;
  }

  /** Beside the slot, not before its next member: the cancel reaches this worker's own members like any other. */
  private failFast(run: ClaimedRun): void {
    enforceMaxFailures(this.store, run.setId).then(
      (cancelled) => cancelled && this.logger.info({ set: run.setId }, 'maxFailures reached: the rest of the set is cancelled'),
      (err: unknown) => this.logger.warn({ err, set: run.setId }, 'checking maxFailures failed; the set runs on'),
    );
  }

  private remember(sample: DurationSample): void {
    this.samples.push(sample);
    if (this.flushTimer === undefined) {
      this.flushTimer = setTimeout(() => void this.flush(), HISTORY_FLUSH_MS);
      this.flushTimer.unref();
    }
  }
}
