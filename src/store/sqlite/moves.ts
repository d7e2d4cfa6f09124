/**
 * The SQLite store's member moves: claims, starts, outcomes, releases and
 * reaping, each run inside a transaction its caller (SqliteStore) opens, and the
 * move of the set's counts, status and timestamps that every one of them carries
 * (moveSetCounts). The PostgreSQL store makes the same moves in
 * src/store/postgres/moves-sql.ts; the shared contract suite holds both to them.
 */
import type Database from 'better-sqlite3';
import { canMoveMember, deriveSetStatus, type RunState } from '../../core/states.js';
import type { ClaimedRun, RunOutcome } from '../../core/types.js';
import { WORKER_LOST, type ClaimRequest, type LeaseRef, type ReapResult } from '../store.js';
import { countsOf } from '../rows.js';
import { claimedOf, SqliteBatches, type ReservedRow, type SetOfClaim } from './batches.js';
import { SqliteCancels } from './cancel.js';
import type { SetRowCache } from './set-cache.js';
import { now, type SetRow, type Statements } from './statements.js';

export class SqliteMoves {
  /** Reserved members and artifacts, whose moves carry set counts through this class too. */
  readonly batches: SqliteBatches;
  /** Cancel and fail fast, whose member moves carry set counts through this class too. */
  readonly cancels: SqliteCancels;

  constructor(
    db: Database.Database,
    private readonly sql: Statements,
    /** The owning process's copy of set rows: every set write drops its entry. */
    private readonly setRows: SetRowCache | undefined,
    /** Told of every set whose counts a move changed, inside the move's transaction (see SqliteStore.onSetChanged). */
    private readonly setMoved: (setId: string) => void,
  ) {
    this.batches = new SqliteBatches(db, (setId, from, to, at) => this.moveSetCounts(setId, from, to, at));
    this.cancels = new SqliteCancels(db, (setId, from, to, at) => this.moveSetCounts(setId, from, to, at));
  }

  /**
   * Leases up to `limit` waiting members: the first `limit − reserve` start
   * unless they have a batch key, the rest are reserved.
   */
  claim(req: ClaimRequest): ClaimedRun[] {
    const at = now();
    const starting = req.limit - (req.reserve ?? 0);
    const skip = req.skipBatchKeys ?? [];
    const filtered = skip.length > 0 || req.setId !== undefined || req.envs !== undefined;
    const waiting = filtered
      ? this.sql.waitingRunsSkipping.all({ skip: JSON.stringify(skip), set_id: req.setId ?? null, envs: req.envs ? JSON.stringify(req.envs) : null, limit: req.limit })
      : this.sql.waitingRuns.all(req.limit);
    const rows = waiting as { id: string; set_id: string }[];
    const sets = new Map<string, SetOfClaim>(); // the claimed members' sets, each read once
    const out: ClaimedRun[] = [];
    for (const [i, row] of rows.entries()) {
      const taken =
        i < starting
          ? (this.sql.claimRun.get({ id: row.id, worker_id: req.workerId, lease_expires_at: Date.now() + req.leaseMs, at }) as ReservedRow | undefined)
          : this.batches.reserve(row.id, req.workerId, req.leaseMs);
      if (!taken) continue;
      if (i < starting && taken.batch_key === null) this.moveSetCounts(row.set_id, 'WAITING', 'RUNNING', at); // else reserved: still WAITING
      let set = sets.get(row.set_id);
      if (set === undefined) {
        set = this.batches.setOfClaim(row.set_id);
        if (set === undefined) throw new Error(`member ${row.id} has no set ${row.set_id}`); // the foreign key forbids it
        sets.set(row.set_id, set);
      }
      out.push(claimedOf(row.id, row.set_id, taken, set, req.workerId));
    }
    return out;
  }

  /**
   * Starts a member reserved under `lease` and renews the lease; already
   * RUNNING under it: true, only the lease renewed.
   */
  begin(lease: LeaseRef, leaseMs: number): boolean {
    const fence = fenceOf(lease);
    const held = this.sql.leaseStatus.get(fence) as { status: RunState } | undefined;
    if (!held) return false;
    if (held.status === 'WAITING') this.batches.startRun(lease, now());
    this.sql.renewLease.run({ ...fence, lease_expires_at: Date.now() + leaseMs });
    return true;
  }

  /**
   * Ends a member under its lease, with its artifacts; false when the lease is
   * not ours. Repeated with the same outcome under the same lease, true and
   * nothing written: a retry whose first try committed.
   */
  finish(lease: LeaseRef, outcome: RunOutcome): boolean {
    const at = now();
    const fence = fenceOf(lease);
    const written = { status: outcome.status, attempts: outcome.attempts, error: outcome.error, duration_ms: Math.round(outcome.durationMs) };
    const held = this.sql.leaseStatus.get(fence) as { status: RunState; set_id: string } | undefined;
    if (!held) return this.sql.holdsOutcome.get({ id: lease.runId, claims: lease.claim, ...written }) !== undefined;
    // Read under the same fence inside this write transaction: the update matches.
    this.sql.finishRun.run({ ...fence, ...written, output: outcome.output, at });
    this.moveSetCounts(held.set_id, held.status, outcome.status, at);
    this.batches.insertArtifacts(lease.runId, held.set_id, outcome.artifacts ?? [], at);
    return true;
  }

  /** Gives leased members back to WAITING, unleased; returns how many were ours. */
  release(leases: readonly LeaseRef[]): number {
    const at = now();
    let n = 0;
    for (const lease of leases) {
      const fence = fenceOf(lease);
      const held = this.sql.leaseStatus.get(fence) as { status: RunState; set_id: string } | undefined;
      if (!held) continue;
      // Read under the same fence inside this write transaction: the update matches.
      this.sql.releaseRun.run(fence);
      if (held.status === 'RUNNING') this.moveSetCounts(held.set_id, 'RUNNING', 'WAITING', at);
      n++;
    }
    return n;
  }

  /** Expired leases back to WAITING, or FAIL with WORKER_LOST at the `maxLostLeases`-th. */
  reap(maxLostLeases: number): ReapResult {
    const at = now();
    const expired = this.sql.expiredRuns.all(Date.now()) as { id: string; set_id: string; status: RunState; claims: number; lost_leases: number }[];
    const res: ReapResult = { requeued: 0, failed: 0 };
    for (const run of expired) {
      if (run.lost_leases + 1 < maxLostLeases) {
        this.sql.requeueRun.run({ id: run.id, claims: run.claims });
        if (run.status === 'RUNNING') this.moveSetCounts(run.set_id, 'RUNNING', 'WAITING', at); // a reserved one stays WAITING
        res.requeued++;
      } else {
        this.sql.failLostRun.run({ id: run.id, claims: run.claims, at, error: WORKER_LOST });
        this.moveSetCounts(run.set_id, run.status, 'FAIL', at);
        res.failed++;
      }
    }
    return res;
  }

  /** One member moved: update the set's counts, timestamps and derived status. */
  private moveSetCounts(setId: string, from: RunState, to: RunState, at: string): void {
    if (!canMoveMember(from, to)) throw new Error(`illegal member move ${from} → ${to}`);
    const row = this.sql.getSet.get(setId) as SetRow;
    const counts = countsOf(row);
    counts[from]--;
    counts[to]++;
    const startedAt = row.started_at ?? (to === 'RUNNING' ? at : null);
    const status = deriveSetStatus(counts, startedAt !== null);
    this.setRows?.drop(setId);
    this.setMoved(setId);
    this.sql.updateSetProgress.run({
      id: setId,
      status,
      started_at: startedAt ?? (status === 'FAIL' ? at : null),
      ended_at: status === 'SUCCESS' || status === 'FAIL' ? at : null,
      count_waiting: counts.WAITING,
      count_running: counts.RUNNING,
      count_success: counts.SUCCESS,
      count_fail: counts.FAIL,
    });
  }
}

/** The named parameters that fence a write to the lease's holder. */
function fenceOf(lease: LeaseRef): { id: string; worker_id: string; claims: number } {
  return { id: lease.runId, worker_id: lease.workerId, claims: lease.claim };
}
