/**
 * The dashboard's list of sets on PostgreSQL, a page at a time, newest first.
 * Each listing shape (filters × cursor) is its own named statement, so the
 * planner walks the matching (…, created_at, id) index backwards.
 */
import type { Queryable } from './connection.js';
import { SET_COLUMNS, type Names, type SetRow } from './statements.js';
import type { RunState } from '../../core/states.js';
import type { TestRunSetRecord } from '../../core/types.js';
import { decodeCursor, encodeCursor, type CursorPosition, type ListSetsQuery, type SetPage } from '../browse.js';

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
