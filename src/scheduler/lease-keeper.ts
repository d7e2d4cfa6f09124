/**
 * The leases a worker process holds, kept alive: a single member's and every
 * member of a share alike, from the claim until the outcome is written (which
 * may be well after the run ended: a slot writes it beside its next member, a
 * batch saves traces first). A lease found lost is somebody else's now: the
 * keeper forgets it and tells its holder, which stops the member and writes
 * nothing for it.
 *
 * One timer per pool, not one per member: every lease held is heartbeated in
 * the same beat, so a pool costs one wake-up per period however many members it
 * runs, a member that ends within a period costs no heartbeat at all (as
 * before), and a link over a network sees the beats together — one request for
 * them all once the worker protocol grows a many-lease heartbeat, a change in
 * this file alone. The timer runs only while a lease is held.
 */
import type { Logger } from 'pino';
import type { LeaseRef } from '../store/store.js';
import type { WorkerLink } from '../worker-link/link.js';

/** What the keeper asks of a lease's holder. */
export interface LeaseHolder {
  /** The member's attempts so far, reported with each heartbeat. */
  attempts(): number;
  /** The member's run ended: its outcome may be committing right now, which ends the lease, so a miss is no news. */
  ended(): boolean;
  /** The lease went to another worker (never called once ended() is true, nor after release). */
  lost(): void;
}

/** Heartbeats per lease period: a lease survives two lost heartbeats. */
const BEATS_PER_LEASE = 3;

export class LeaseKeeper {
  private readonly held = new Map<LeaseRef, LeaseHolder>();
  private timer: NodeJS.Timeout | undefined;
  private readonly beatMs: number;

  constructor(
    private readonly link: Pick<WorkerLink, 'heartbeat'>,
    private readonly leaseMs: number,
    private readonly logger: Logger,
  ) {
    this.beatMs = Math.max(50, Math.floor(leaseMs / BEATS_PER_LEASE));
  }

  /** Leases held now. */
  get size(): number {
    return this.held.size;
  }

  /** Keeps `lease` alive until the returned release is called (or the lease is found lost). */
  hold(lease: LeaseRef, holder: LeaseHolder): () => void {
    this.held.set(lease, holder);
    this.timer ??= setInterval(() => this.beat(), this.beatMs);
    return () => this.forget(lease, holder);
  }

  private forget(lease: LeaseRef, holder: LeaseHolder): void {
    if (this.held.get(lease) !== holder) return;
    this.held.delete(lease);
    if (this.held.size > 0) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One heartbeat for every lease held, all at once. */
  private beat(): void {
    for (const [lease, holder] of this.held) {
      this.link.heartbeat(lease, this.leaseMs, holder.attempts()).then(
        (ours) => {
          // Released meanwhile (its outcome is written), or ended (its outcome is committing): no news.
          if (ours || this.held.get(lease) !== holder || holder.ended()) return;
          this.forget(lease, holder);
          this.logger.warn({ run: lease.runId, claim: lease.claim }, 'lease lost: another worker took the member over; stopping it here');
          holder.lost();
        },
        (err: unknown) => this.logger.warn({ err, run: lease.runId }, 'heartbeat failed; will retry'),
      );
    }
  }
}
