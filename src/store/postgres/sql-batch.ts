/**
 * The PostgreSQL store's SQL for batched members and artifact metadata, one
 * named operation per function (see ./sql.ts for the rules every statement
 * follows: schema-qualified, database clock, members locked before sets).
 */
import { toClaimed as claimedFrom, type ArtifactRow as StoredArtifactRow } from '../rows.js';
import type { ClaimedRun, NewArtifact } from '../../core/types.js';
import type { Queryable } from './connection.js';
import type { ClaimRow, LeaseParams, Names } from './sql.js';

const NOW = "date_trunc('milliseconds', now())";

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
          lease_expires_at = now() + make_interval(secs => $5::double precision / 1000)
        FROM picked WHERE r.id = picked.id
        RETURNING r.id, r.set_id, r.spec, r.claims, r.seq, r.batch_key
      )
      SELECT c.id, c.set_id, c.spec, s.variables, c.claims, c.batch_key
      FROM claimed c JOIN ${n.sets} s ON s.id = c.set_id
      ORDER BY c.seq`,
    values: [req.workerId, req.setId, req.batchKey, req.limit, req.leaseMs],
  });
  return rows;
}

/** A reserved member began: RUNNING under the same lease. Returns its set, or undefined when the lease is not ours. */
export async function startMember(q: Queryable, n: Names, lease: LeaseParams): Promise<string | undefined> {
  const { rows } = await q.query<{ set_id: string }>({
    name: 'runset.startMember',
    text: `
      UPDATE ${n.runs} AS r SET status = 'RUNNING', started_at = COALESCE(r.started_at, ${NOW})
      WHERE r.id = $1 AND r.worker_id = $2 AND r.claims = $3 AND r.status = 'WAITING'
      RETURNING r.set_id`,
    values: [lease.runId, lease.workerId, lease.claim],
  });
  return rows[0]?.set_id;
}

export async function insertArtifacts(q: Queryable, n: Names, runId: string, setId: string, artifacts: readonly NewArtifact[]): Promise<void> {
  if (artifacts.length === 0) return;
  await q.query({
    name: 'runset.insertArtifacts',
    text: `
      INSERT INTO ${n.artifacts} (${ARTIFACT_COLUMNS})
      SELECT u.id, $1, $2, u.name, u.content_type, u.size, u.location, ${NOW}
      FROM unnest($3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[]) AS u(id, name, content_type, size, location)`,
    values: [
      runId,
      setId,
      artifacts.map((a) => a.id),
      artifacts.map((a) => a.name),
      artifacts.map((a) => a.contentType),
      artifacts.map((a) => a.size),
      artifacts.map((a) => a.location),
    ],
  });
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

