/**
 * What a claim returned, and the two ways claimed members go straight back:
 * shutdown began, or the answer came so late that their leases may already have
 * expired (this process was frozen or starved, and another worker may be
 * running them). Shared by the pool's dispatch and its slots.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { ClaimedRun } from '../core/types.js';
import { leaseOf } from '../store/store.js';
import type { WorkerLink } from '../worker-link/link.js';

/** What a claim returned, and when it was asked for (performance.now()). */
export interface Claim {
  runs: ClaimedRun[];
  askedAt: number;
}

/** True (and said) when a claim of `runs` members asked for at `askedAt` may have outlived its lease. */
export function claimedLate(askedAt: number, runs: number, leaseMs: number, logger: Logger): boolean {
  const late = performance.now() - askedAt >= leaseMs;
  if (late) logger.warn({ runs }, 'a claim was answered after its lease could have expired; giving it back instead of running it');
  return late;
}

/** Releases claimed runs for any worker to take (release wakes the workers); a failure leaves them to their leases' expiry. */
export async function giveBack(link: Pick<WorkerLink, 'releaseRuns'>, runs: ClaimedRun[], logger: Logger): Promise<void> {
  if (runs.length === 0) return;
  await link.releaseRuns(runs.map(leaseOf)).catch((err: unknown) => {
    logger.warn({ err }, 'giving back claimed runs failed; their leases will expire');
  });
}
