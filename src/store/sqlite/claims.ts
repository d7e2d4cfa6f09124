/**
 * The SQLite side of the claims sub-store: each move one immediate transaction
 * (./moves.ts makes it), wake-ups and cancel notices as in-process events (the
 * embedded store serves one process: see ./lock.ts).
 */
import type { EventEmitter } from 'node:events';
import type Database from 'better-sqlite3';
import type { ClaimedRun, RunOutcome } from '../../core/types.js';
import type { BatchClaimRequest, ClaimRequest, ClaimsStore, FinishedAndClaimed, LeaseRef, NextClaim, ReapResult } from '../claims.js';
import type { SqliteMoves } from './moves.js';
import { TABLES } from './statements.js';
import { SQLITE } from '../sql/dialect.js';
import { pickBatchSql } from '../sql/claim-picks.js';
import { SET_CHANGED } from './set-moves.js';
import { immediateTransaction, settle } from './settle.js';

/** The events of the store's wake-up emitter that claims tell and hear. */
export const RUNS_WAITING = 'waiting';
export const SET_CANCELLED = 'cancelled';

export class SqliteClaims implements ClaimsStore {
  private readonly waitingWorkOf: Database.Statement;
  private readonly endedWithLimit: Database.Statement;
  private readonly inTransaction: <T>(work: () => T) => T;

  constructor(
    private readonly db: Database.Database,
    private readonly moves: SqliteMoves,
    private readonly wake: EventEmitter,
  ) {
    this.waitingWorkOf = db.prepare(pickBatchSql(SQLITE, TABLES, 'expected_ms', { set: '?', batchKey: '?', limit: '?', lock: false }));
    this.inTransaction = immediateTransaction(db);
    this.endedWithLimit = db.prepare("SELECT 1 FROM test_run_sets WHERE id = ? AND max_concurrent IS NOT NULL AND status IN ('SUCCESS', 'FAIL')");
  }

  claimRuns(req: ClaimRequest): Promise<ClaimedRun[]> {
    return settle(() => this.inTransaction(() => this.moves.claim(req)));
  }

  claimBatch(req: BatchClaimRequest): Promise<ClaimedRun[]> {
    return settle(() => this.inTransaction(() => this.moves.claimBatch(req)));
  }

  startRun(lease: LeaseRef, sinceMs = 0): Promise<boolean> {
    return settle(() => this.inTransaction(() => this.moves.start(lease, new Date(Date.now() - sinceMs).toISOString())));
  }

  heartbeat(lease: LeaseRef, leaseMs: number, attempts: number): Promise<boolean> {
    return settle(() => this.moves.heartbeat(lease, leaseMs, attempts));
  }

  finishRun(lease: LeaseRef, outcome: RunOutcome): Promise<boolean> {
    return settle(() => this.inTransaction(() => this.moves.finish(lease, outcome)));
  }

  finishAndClaim(lease: LeaseRef, outcome: RunOutcome, next: NextClaim): Promise<FinishedAndClaimed> {
    return settle(() =>
      this.inTransaction(() => ({
        finished: this.moves.finish(lease, outcome),
        started: next.start !== undefined && this.moves.begin(next.start, next.leaseMs),
        claimed: this.moves.claim(next),
      })),
    );
  }

  releaseRuns(leases: LeaseRef[]): Promise<number> {
    return settle(() => {
      const released = this.inTransaction(() => this.moves.release(leases));
      if (released > 0) this.wake.emit(RUNS_WAITING);
      return released;
    });
  }

  reapExpired(maxLostLeases: number): Promise<ReapResult> {
    return settle(() => {
      const result = this.inTransaction(() => this.moves.reap(maxLostLeases));
      if (result.requeued > 0) this.wake.emit(RUNS_WAITING);
      return result;
    });
  }

  waitingWork(setId: string, batchKey: string, limit: number): Promise<number[]> {
    return settle(() => (this.waitingWorkOf.all(setId, batchKey, limit) as { expected_ms: number | null }[]).map((r) => r.expected_ms ?? 0));
  }

  notifyRunsWaiting(): Promise<void> {
    this.wake.emit(RUNS_WAITING);
    return Promise.resolve();
  }

  onRunsWaiting(listener: () => void): () => void {
    // A set with a limit that ended (however it ended) may let the next of its environment's queue start.
    const onSetChanged = (setId: string) => {
      if (this.db.open && this.endedWithLimit.get(setId) !== undefined) listener();
    };
    this.wake.on(RUNS_WAITING, listener);
    this.wake.on(SET_CHANGED, onSetChanged);
    return () => {
      this.wake.off(RUNS_WAITING, listener);
      this.wake.off(SET_CHANGED, onSetChanged);
    };
  }

  onSetCancelled(listener: (setId: string) => void): () => void {
    this.wake.on(SET_CANCELLED, listener);
    return () => this.wake.off(SET_CANCELLED, listener);
  }
}
