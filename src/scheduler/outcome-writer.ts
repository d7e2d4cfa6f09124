/**
 * Writing a member's outcome, for single members and batches alike: retried
 * while the service is out of reach (and only then) for as long as the lease
 * can still be valid. What follows a written outcome on the service's side (the
 * duration history, fail fast) is the link's business (src/worker-link/).
 */
import type { Logger } from 'pino';
import type { ClaimedRun, RunOutcome } from '../core/types.js';
import { isStoreUnavailable, leaseOf } from '../store/store.js';
import type { WorkerLink } from '../worker-link/link.js';
import type { WorkerMetrics } from './worker-metrics.js';

export class OutcomeWriter {
  constructor(
    private readonly link: WorkerLink,
    private readonly logger: Logger,
    private readonly leaseMs: number,
    private readonly metrics?: WorkerMetrics,
  ) {}

  /** Writes the outcome alone (WorkerLink.finishRun). False: it was not written. */
  async finish(run: ClaimedRun, outcome: RunOutcome): Promise<boolean> {
    const written = await this.write(run, outcome, async () => ({ finished: await this.link.finishRun(leaseOf(run), outcome, run) }));
    return written?.finished ?? false;
  }

  /**
   * Writes an outcome through `write` (which may do more in the same call, and
   * is told when it is a retry). Retries while the service is unavailable — any
   * other error is a bug or a refused move, which trying again cannot mend —
   * with jittered backoff, while the lease can still be valid. Says so when the
   * lease was not ours; when the write fails for good, says so and answers
   * undefined: the outcome is lost, and the reaper requeues the member when its
   * lease expires.
   */
  async write<T extends { finished: boolean }>(run: ClaimedRun, outcome: RunOutcome, write: (retry: boolean) => Promise<T>): Promise<T | undefined> {
    const deadline = Date.now() + this.leaseMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const written = await write(attempt > 0);
        if (!written.finished) this.logger.warn({ run: run.id }, 'lease was taken over; outcome discarded');
        else this.metrics?.memberEnded(run, outcome);
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
}
