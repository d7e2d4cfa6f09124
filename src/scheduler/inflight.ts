/**
 * The members a worker process is running (or writing the outcome of), and
 * stopping those of a cancelled set: the store tells every process of a cancel
 * (WorkerLink.onSetCancelled); this process aborts its members of that set, which
 * kills their process trees (a Playwright batch and its browsers included).
 * Their outcomes are not written: the store has already ended them FAIL, and
 * the lease they held is gone. A cancel this process does not hear of (the
 * notification was lost) still stops them at their next heartbeat, when the
 * lease is found gone.
 */
import type { Logger } from 'pino';
import type { LeaseRef } from '../store/store.js';
import type { WorkerLink } from '../worker-link/link.js';

/** A member being run, or whose outcome is being written: what shutdown aborts and gives back. */
export interface InFlight {
  setId: string;
  lease: LeaseRef;
  abort: AbortController;
}

/** Subscribes to cancellations; returns the unsubscribe function. */
export function stopCancelledMembers(link: Pick<WorkerLink, 'onSetCancelled'>, inflight: ReadonlyMap<string, InFlight>, logger: Logger): () => void {
  return link.onSetCancelled((setId) => {
    const members = [...inflight.values()].filter((f) => f.setId === setId);
    if (members.length === 0) return;
    // A batch shares one controller: abort each once.
    for (const abort of new Set(members.map((f) => f.abort))) abort.abort('cancelled');
    logger.info({ set: setId, members: members.length }, 'set cancelled: stopping its members here');
  });
}
