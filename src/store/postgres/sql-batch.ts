/**
 * The PostgreSQL store's SQL for batched members and artifact metadata, one
 * named operation per function (see ./sql.ts for the rules every statement
 * follows: schema-qualified, database clock, members locked before sets).
 */
import { toClaimed as claimedFrom, type ArtifactRow as StoredArtifactRow } from '../rows.js';
import type { ClaimedRun } from '../../core/types.js';
import type { Queryable } from './connection.js';
import { msFromNow, type Names } from './sql.js';
import type { ClaimRow } from './moves-sql.js';

export type ArtifactRow = StoredArtifactRow<Date>;

const ARTIFACT_COLUMNS = 'id, run_id, set_id, name, content_type, size, location, created_at';

/** Reserves up to `limit` unleased waiting members of one set with one batch key: leased, still WAITING. */
export async function claimBatchMembers(
  q: Queryable,
  n: Names,
  req: { workerId: string; setId: string; batchKey: string; limit: number; leaseMs: number },
): Promise<ClaimRow[]> {
  const { rows } = await q.query<ClaimRow>({
    name: 'runset.claimBatchMembers',
    text: `
      WITH picked AS (
        SELECT id FROM ${n.runs}
        WHERE set_id = $2 AND batch_key = $3 AND status = 'WAITING' AND worker_id IS NULL
        ORDER BY seq LIMIT $4 FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE ${n.runs} AS r SET claims = r.claims + 1, worker_id = $1,
          lease_expires_at = ${msFromNow('$5')}
        FROM picked WHERE r.id = picked.id
        RETURNING r.id, r.set_id, r.spec, r.claims, r.seq, r.batch_key, r.expected_ms
      )
      SELECT c.id, c.set_id, c.spec, s.variables, s.env, c.claims, c.batch_key, c.expected_ms
      FROM claimed c JOIN ${n.sets} s ON s.id = c.set_id
      ORDER BY c.seq`,
    values: [req.workerId, req.setId, req.batchKey, req.limit, req.leaseMs],
  });
  return rows;
}

export async function listArtifacts(q: Queryable, n: Names, setId: string): Promise<ArtifactRow[]> {
  const { rows } = await q.query<ArtifactRow>({
    name: 'runset.listArtifacts',
    text: `SELECT ${ARTIFACT_COLUMNS} FROM ${n.artifacts} WHERE set_id = $1 ORDER BY run_id, created_at, name`,
    values: [setId],
  });
  return rows;
}

export async function getArtifact(q: Queryable, n: Names, id: string): Promise<ArtifactRow | undefined> {
  const { rows } = await q.query<ArtifactRow>({
    name: 'runset.getArtifact',
    text: `SELECT ${ARTIFACT_COLUMNS} FROM ${n.artifacts} WHERE id = $1`,
    values: [id],
  });
  return rows[0];
}

/** Deletes the oldest artifacts created before `before`; rows another sweeper holds are left to it. */
export async function deleteOldArtifacts(q: Queryable, n: Names, before: string, limit: number): Promise<ArtifactRow[]> {
  const { rows } = await q.query<ArtifactRow>({
    name: 'runset.deleteOldArtifacts',
    text: `
      WITH old AS (
        SELECT id FROM ${n.artifacts} WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED
      )
      DELETE FROM ${n.artifacts} AS a USING old WHERE a.id = old.id
      RETURNING a.id, a.run_id, a.set_id, a.name, a.content_type, a.size, a.location, a.created_at`,
    values: [before, limit],
  });
  return rows;
}

export function toClaimed(r: ClaimRow, workerId: string): ClaimedRun {
  return claimedFrom(r, { spec: r.spec, variables: r.variables }, workerId);
}

