/**
 * A worker slot's reservation of its next member (see WorkerPool.runSlot).
 */
import { performance } from 'node:perf_hooks';
import type { ClaimedRun } from '../core/types.js';

/**
 * A member a slot reserved for its next turn: leased to this worker, still
 * WAITING. The slot takes it when its current member ends; if that member is
 * still running after `holdMs`, the reservation is given back instead (so it
 * keeps the member from other workers no longer than that).
 */
export class Reservation {
  private held = true;
  /** Set when take() gave the reservation back for being too old to start (half its lease gone). */
  late = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly run: ClaimedRun,
    readonly askedAt: number,
    holdMs: number,
    private readonly giveBack: (run: ClaimedRun) => void,
  ) {
    this.timer = setTimeout(() => {
      if (!this.held) return;
      this.held = false;
      giveBack(run);
    }, holdMs);
  }

  get runId(): string {
    return this.run.id;
  }

  /**
   * The member, for the slot to start now; undefined when it was given back
   * already, or is given back now because half its lease has gone by (this
   * process was frozen or starved: its lease may expire before the start that
   * renews it lands).
   */
  take(leaseMs: number): ClaimedRun | undefined {
    if (!this.held) return undefined;
    this.held = false;
    clearTimeout(this.timer);
    if (performance.now() - this.askedAt < leaseMs / 2) return this.run;
    this.late = true;
    this.giveBack(this.run);
    return undefined;
  }
}
