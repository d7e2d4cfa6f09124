/**
 * The PostgreSQL store's dashboard SQL: listing sets a page at a time, a set's
 * overrides, and browser sessions (expiry judged by the database's clock). Each
 * listing shape (filters × cursor) is its own named statement, so the planner
 * walks the matching (…, created_at, id) index backwards.
 */
import type { Queryable } from './connection.js';
import { msFromNow, type KeyRow, type Names, type SetRow } from './sql.js';
import type { RunState } from '../../core/states.js';
import type { TestRunSetRecord } from '../../core/types.js';
import { decodeCursor, encodeCursor, type CursorPosition, type ListSetsQuery, type SetPage } from '../browse.js';

const SET_COLUMNS = 'id, env, status, created_at, started_at, ended_at, count_waiting, count_running, count_success, count_fail';

interface ListParams {
  env?: string;
  envs?: readonly string[];
  status?: RunState;
  labels?: Readonly<Record<string, string>> | undefined;
  after?: CursorPosition;
  /** Rows to fetch (the caller asks for one more than a page). */
  limit: number;
}

/** One page of the list, newest first, with the cursor of the next (null on the last). */
export async function listSetsPage(q: Queryable, n: Names, query: ListSetsQuery, toSet: (row: SetRow) => TestRunSetRecord): Promise<SetPage> {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  // PostgreSQL text cannot hold a NUL byte, so no set's environment has one (and the query would fail).
  if (query.env?.includes('\0')) return { sets: [], nextCursor: null };
  const rows = await listSets(q, n, { env: query.env, envs: query.envs, status: query.status, labels: query.labels, after, limit: query.limit + 1 });
  const sets = rows.slice(0, query.limit).map(toSet);
  const last = sets[sets.length - 1];
  const more = rows.length > query.limit && last !== undefined;
  return { sets, nextCursor: more ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null };
}

async function listSets(q: Queryable, n: Names, p: ListParams): Promise<SetRow[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  const shape: string[] = [];
  if (p.env !== undefined) {
    values.push(p.env);
    where.push(`env = $${values.length}`);
    shape.push('env');
  }
  if (p.envs !== undefined) {
    values.push(p.envs);
    where.push(`env = ANY($${values.length}::text[])`);
    shape.push('envs');
  }
  if (p.status !== undefined) {
    values.push(p.status);
    where.push(`status = $${values.length}`);
    shape.push('status');
  }
  if (p.labels !== undefined && Object.keys(p.labels).length > 0) {
    // Containment, served by the GIN index test_run_sets_labels.
    values.push(JSON.stringify(p.labels));
    where.push(`labels @> $${values.length}::jsonb`);
    shape.push('labels');
  }
  if (p.after !== undefined) {
    values.push(p.after.createdAt, p.after.id);
    where.push(`(created_at, id) < ($${values.length - 1}::timestamptz, $${values.length})`);
    shape.push('cursor');
  }
  values.push(p.limit);
  const filter = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  const { rows } = await q.query<SetRow>({
    name: `runset.browse.listSets.${shape.join('.') || 'all'}`,
    text: `SELECT ${SET_COLUMNS} FROM ${n.sets} ${filter} ORDER BY created_at DESC, id DESC LIMIT $${values.length}`,
    values,
  });
  return rows;
}

export async function getSetOverrides(q: Queryable, n: Names, id: string): Promise<unknown> {
  const { rows } = await q.query<{ overrides: unknown }>({
    name: 'runset.browse.overrides',
    text: `SELECT overrides FROM ${n.sets} WHERE id = $1`,
    values: [id],
  });
  return rows[0]?.overrides;
}

export async function getSetLabels(q: Queryable, n: Names, id: string): Promise<unknown> {
  const { rows } = await q.query<{ labels: unknown }>({
    name: 'runset.browse.labels',
    text: `SELECT labels FROM ${n.sets} WHERE id = $1`,
    values: [id],
  });
  return rows[0]?.labels;
}

export type SessionRow = KeyRow & { csrf_token: string; session_expires_at: Date };

export async function deleteExpiredSessions(q: Queryable, n: Names): Promise<void> {
  await q.query({ name: 'runset.browse.deleteExpiredSessions', text: `DELETE FROM ${n.sessions} WHERE expires_at <= now()` });
}

export async function insertSession(
  q: Queryable,
  n: Names,
  s: { idHash: string; keyId: string; csrfToken: string; ttlMs: number },
): Promise<void> {
  await q.query({
    name: 'runset.browse.insertSession',
    text: `
      INSERT INTO ${n.sessions} (id_hash, key_id, csrf_token, expires_at)
      VALUES ($1, $2, $3, ${msFromNow('$4')})`,
    values: [s.idHash, s.keyId, s.csrfToken, s.ttlMs],
  });
}

/** A revoked key ends its sessions: the join drops them at once, for every process. */
export async function findSession(q: Queryable, n: Names, idHash: string): Promise<SessionRow | undefined> {
  const { rows } = await q.query<SessionRow>({
    name: 'runset.browse.findSession',
    text: `
      SELECT k.id, k.name, k.role, k.envs, k.expires_at, k.created_at, k.last_used_at, k.revoked_at,
        s.csrf_token, s.expires_at AS session_expires_at
      FROM ${n.sessions} s JOIN ${n.keys} k ON k.id = s.key_id
      WHERE s.id_hash = $1 AND s.expires_at > now() AND k.revoked_at IS NULL`,
    values: [idHash],
  });
  return rows[0];
}

export async function deleteSession(q: Queryable, n: Names, idHash: string): Promise<void> {
  await q.query({ name: 'runset.browse.deleteSession', text: `DELETE FROM ${n.sessions} WHERE id_hash = $1`, values: [idHash] });
}
