/**
 * What a worker process tells its metrics (src/metrics/ implements it). The
 * pool holds it only when metrics are on: when they are off there is none, and
 * the slots' paths make no call at all.
 */
import type { ClaimedRun, RunOutcome } from '../core/types.js';

export interface WorkerMetrics {
  /** A member began here: its executor was called (single) or its first test began (batch). */
  memberStarted(run: ClaimedRun): void;
  /** A member's outcome was written under its lease (not when the lease was lost: another worker owns it). */
  memberEnded(run: ClaimedRun, outcome: RunOutcome): void;
}
