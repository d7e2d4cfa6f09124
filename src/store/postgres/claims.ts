/**
 * The PostgreSQL side of the claims sub-store. Each move is one statement that
 * also updates the member's set (./moves.ts, ../sql/set-rollup.ts): one round trip,
 * with no transaction held open across the network. Every move that touches a
 * set row waits its turn in this process (moveInTurn); heartbeats and the
 * reaper do not. Wake-ups and cancel notices are LISTEN/NOTIFY (./listener.ts).
 */
import type pg from 'pg';
import pLimit, { type LimitFunction } from 'p-limit';
import type { ClaimedRun, RunOutcome } from '../../core/types.js';
import { WORKER_LOST, type BatchClaimRequest, type ClaimRequest, type ClaimsStore, type FinishedAndClaimed, type LeaseRef, type NextClaim, type ReapResult } from '../claims.js';
import { withClient, withTransaction, type Queryable } from './connection.js';
import type { WakeListener } from './listener.js';
import { PostgresMoves } from './moves.js';
import { POSTGRES } from '../sql/dialect.js';
import { pickBatchSql } from '../sql/claim-picks.js';
import { toClaimed } from '../rows.js';
import { CANCEL_PAYLOAD } from './cancel.js';
import { notifyWaiting, type Names } from './statements.js';

export class PostgresClaims implements ClaimsStore {
  /** Member moves, one at a time: see `moveInTurn`. */
  private readonly moveLane: LimitFunction = pLimit(1);
  private readonly moves: PostgresMoves;

  constructor(
    private readonly pool: pg.Pool,
    private readonly n: Names,
    private readonly wake: WakeListener,
  ) {
    this.moves = new PostgresMoves(n);
  }

  claimRuns(req: ClaimRequest): Promise<ClaimedRun[]> {
    if (req.limit <= 0) return Promise.resolve([]);
    return this.moveInTurn(async (q) => {
      const rows = await this.moves.claim(q, req);
      return rows.map((r) => toClaimed(r, req.workerId));
    });
  }

  async claimBatch(req: BatchClaimRequest): Promise<ClaimedRun[]> {
    if (req.limit <= 0) return [];
    const rows = await this.moveInTurn((q) => this.moves.claimBatch(q, req));
    return rows.map((r) => toClaimed(r, req.workerId));
  }

  startRun(lease: LeaseRef, sinceMs = 0): Promise<boolean> {
    return this.moveInTurn((q) => this.moves.start(q, lease, sinceMs));
  }

  heartbeat(lease: LeaseRef, leaseMs: number, attempts: number): Promise<boolean> {
    return withClient(this.pool, (q) => this.moves.heartbeat(q, lease, leaseMs, attempts));
  }

  async finishRun(lease: LeaseRef, outcome: RunOutcome): Promise<boolean> {
    const finished = await this.moveInTurn((q) => this.moves.finish(q, lease, outcome));
    return this.writtenBy(finished, lease, outcome);
  }

  async finishAndClaim(lease: LeaseRef, outcome: RunOutcome, next: NextClaim): Promise<FinishedAndClaimed> {
    const step = await this.moveInTurn((q) => this.moves.finishAndClaim(q, lease, outcome, next));
    const finished = await this.writtenBy(step.finished, lease, outcome);
    return { ...step, finished, claimed: step.claimed.map((r) => toClaimed(r, next.workerId)) };
  }

  releaseRuns(leases: LeaseRef[]): Promise<number> {
    if (leases.length === 0) return Promise.resolve(0);
    return this.moveLane(() =>
      withTransaction(this.pool, async (tx) => {
        const released = await this.moves.release(tx, leases);
        if (released > 0) await notifyWaiting(tx, this.n);
        return released;
      }),
    );
  }

  reapExpired(maxLostLeases: number): Promise<ReapResult> {
    return withTransaction(this.pool, async (tx) => {
      const reaped = await this.moves.reap(tx, maxLostLeases, WORKER_LOST);
      if (reaped.requeued > 0) await notifyWaiting(tx, this.n);
      return reaped;
    });
  }

  /** Expected durations of a batch's members that nobody holds yet, in claim order (the test_runs_batch index). */
  waitingWork(setId: string, batchKey: string, limit: number): Promise<number[]> {
    return withClient(this.pool, async (q) => {
      const { rows } = await q.query<{ expected_ms: number | null }>({
        name: 'runset.waitingWork',
        text: pickBatchSql(POSTGRES, this.n, 'expected_ms', { set: '$1', batchKey: '$2', limit: '$3', lock: false }),
        values: [setId, batchKey, limit],
      });
      return rows.map((r) => r.expected_ms ?? 0);
    });
  }

  async notifyRunsWaiting(): Promise<void> {
    await withClient(this.pool, (q) => notifyWaiting(q, this.n));
  }

  onRunsWaiting(listener: () => void): () => void {
    // Every notification may mean work (a cancel frees slots too), and a reconnect ('') may have missed some.
    return this.wake.subscribe(() => listener());
  }

  onSetCancelled(listener: (setId: string) => void): () => void {
    return this.wake.subscribe((payload) => {
      if (payload.startsWith(CANCEL_PAYLOAD)) listener(payload.slice(CANCEL_PAYLOAD.length));
    });
  }

  /**
   * Whether a finish wrote its outcome: when it matched nothing, it may be a
   * retry whose first try committed (its answer lost), and then it did.
   */
  private async writtenBy(finished: boolean, lease: LeaseRef, outcome: RunOutcome): Promise<boolean> {
    return finished || withClient(this.pool, (q) => this.moves.holdsOutcome(q, lease, outcome));
  }

  /**
   * One member move, after this process's earlier ones have ended. A move locks
   * its set's row until it commits, so two moves on one set take turns in the
   * database anyway. Waiting there costs PostgreSQL CPU, though: with two worker
   * slots finishing members of one set, its backends spent 0.8–1.0 ms of CPU per
   * member, against 0.35 ms with the moves taking turns here (bench/README.md,
   * bench:dispatch). A move that fails does not hold up the next.
   */
  private moveInTurn<T>(op: (q: Queryable) => Promise<T>): Promise<T> {
    return this.moveLane(() => withClient(this.pool, op));
  }
}
