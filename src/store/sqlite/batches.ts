/**
 * The SQLite side of reserved members and artifacts: reserving the rest of a
 * batch or a worker slot's next member, starting a reserved member, and
 * artifact metadata. Each method runs
 * inside a transaction the caller (SqliteStore) opens.
 *
 * Reserved = leased (worker_id, claims, lease_expires_at set) but still WAITING
 * in the set's counts: a batch of 50 Playwright cases shows 50 WAITING until
 * Playwright begins each one, so counts are live rather than jumping to RUNNING.
 */
import type Database from 'better-sqlite3';
import type { RunState } from '../../core/states.js';
import type { ArtifactRecord, ClaimedRun, NewArtifact } from '../../core/types.js';
import type { BatchClaimRequest, LeaseRef } from '../store.js';
import { rowMappers, toClaimed, type ArtifactRow as StoredArtifactRow } from '../rows.js';

export type MoveCounts = (setId: string, from: RunState, to: RunState, at: string) => void;

type ArtifactRow = StoredArtifactRow<string>;

/** What leasing a member returns: its new claim number, spec (JSON), batch key and expected duration. */
export interface ReservedRow {
  claims: number;
  spec: string;
  batch_key: string | null;
  expected_ms: number | null;
}

/** What a claim needs of a member's set: its environment and variables (as stored JSON). */
export interface SetOfClaim {
  env: string;
  variables: string;
}

/** A member just leased to `workerId`, as claims hand it out. */
export function claimedOf(id: string, setId: string, taken: ReservedRow, set: SetOfClaim, workerId: string): ClaimedRun {
  return toClaimed(
    { id, set_id: setId, env: set.env, claims: taken.claims, batch_key: taken.batch_key, expected_ms: taken.expected_ms },
    { spec: JSON.parse(taken.spec), variables: JSON.parse(set.variables) },
    workerId,
  );
}

const ARTIFACT_COLUMNS = 'id, run_id, set_id, name, content_type, size, location, created_at';

export class SqliteBatches {
  private readonly sql: Record<
    'batchRuns' | 'reserveRun' | 'setOfClaim' | 'startRun' | 'insertArtifact' | 'listArtifacts' | 'getArtifact' | 'oldArtifacts' | 'deleteArtifact',
    Database.Statement
  >;

  constructor(db: Database.Database, private readonly move: MoveCounts) {
    this.sql = {
      batchRuns: db.prepare(`
        SELECT id FROM test_runs
        WHERE set_id = @set_id AND batch_key = @batch_key AND status = 'WAITING' AND worker_id IS NULL
        ORDER BY rowid LIMIT @limit`),
      reserveRun: db.prepare(`
        UPDATE test_runs SET claims = claims + 1, worker_id = @worker_id, lease_expires_at = @lease_expires_at
        WHERE id = @id AND status = 'WAITING' AND worker_id IS NULL
        RETURNING claims, spec, batch_key, expected_ms`),
      setOfClaim: db.prepare('SELECT env, variables FROM test_run_sets WHERE id = ?'),
      startRun: db.prepare(`
        UPDATE test_runs SET status = 'RUNNING', started_at = COALESCE(started_at, @at), ran_on = worker_id
        WHERE id = @id AND worker_id = @worker_id AND claims = @claims AND status = 'WAITING'
        RETURNING set_id`),
      insertArtifact: db.prepare(`
        INSERT INTO artifacts (${ARTIFACT_COLUMNS})
        VALUES (@id, @run_id, @set_id, @name, @content_type, @size, @location, @created_at)`),
      listArtifacts: db.prepare(`SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE set_id = ? ORDER BY run_id, created_at, name`),
      getArtifact: db.prepare(`SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE id = ?`),
      oldArtifacts: db.prepare(`SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE created_at < ? ORDER BY created_at LIMIT ?`),
      deleteArtifact: db.prepare('DELETE FROM artifacts WHERE id = ?'),
    };
  }

  claimBatch(req: BatchClaimRequest): ClaimedRun[] {
    if (req.limit <= 0) return [];
    const rows = this.sql.batchRuns.all({ set_id: req.setId, batch_key: req.batchKey, limit: req.limit }) as { id: string }[];
    const set = this.setOfClaim(req.setId);
    const out: ClaimedRun[] = [];
    for (const row of rows) {
      const taken = this.reserve(row.id, req.workerId, req.leaseMs);
      if (taken && set !== undefined) out.push(claimedOf(row.id, req.setId, taken, set, req.workerId));
    }
    return out;
  }

  /** A set's environment and variables, or undefined for no such set. */
  setOfClaim(setId: string): SetOfClaim | undefined {
    return this.sql.setOfClaim.get(setId) as SetOfClaim | undefined;
  }

  /** Leases an unleased WAITING member without starting it; undefined when someone else holds it. */
  reserve(id: string, workerId: string, leaseMs: number): ReservedRow | undefined {
    return this.sql.reserveRun.get({ id, worker_id: workerId, lease_expires_at: Date.now() + leaseMs }) as ReservedRow | undefined;
  }

  startRun(lease: LeaseRef, at: string): boolean {
    const row = this.sql.startRun.get({ id: lease.runId, worker_id: lease.workerId, claims: lease.claim, at }) as { set_id: string } | undefined;
    if (!row) return false;
    this.move(row.set_id, 'WAITING', 'RUNNING', at);
    return true;
  }

  insertArtifacts(runId: string, setId: string, artifacts: readonly NewArtifact[], at: string): void {
    for (const a of artifacts) {
      this.sql.insertArtifact.run({
        id: a.id, run_id: runId, set_id: setId, name: a.name, content_type: a.contentType, size: a.size, location: a.location, created_at: at,
      });
    }
  }

  listArtifacts(setId: string): ArtifactRecord[] {
    return (this.sql.listArtifacts.all(setId) as ArtifactRow[]).map(toArtifact);
  }

  getArtifact(id: string): ArtifactRecord | undefined {
    const row = this.sql.getArtifact.get(id) as ArtifactRow | undefined;
    return row ? toArtifact(row) : undefined;
  }

  deleteArtifactsBefore(before: string, limit: number): ArtifactRecord[] {
    const rows = this.sql.oldArtifacts.all(before, limit) as ArtifactRow[];
    for (const row of rows) this.sql.deleteArtifact.run(row.id);
    return rows.map(toArtifact);
  }
}

const { toArtifact } = rowMappers<string>((value) => value);
