/**
 * The PostgreSQL store's SQL, one named operation per function, kept apart from
 * the code that sequences them into transactions (src/store/postgres/index.ts).
 *
 * - Every statement is schema-qualified (no search_path games) and prepared by
 *   name, once per pooled connection.
 * - Member moves (claims, outcomes, releases, reaping) are in ./moves-sql.ts.
 * - Every clock reading is the database's (`now()`), never a worker's; stored
 *   timestamps are truncated to milliseconds so that what is read back is exactly
 *   what was written, in the same `toISOString()` form as the SQLite store.
 * - Rows are locked members first, then sets in id order, in every statement,
 *   so concurrent claimers, finishers and reapers cannot deadlock.
 */
import type * as rows from '../rows.js';
import type { NewApiKey } from '../store.js';
import type { NewTestRunSet } from '../../core/types.js';
import { batchKeyOf } from '../../core/batch.js';
import type { Queryable } from './connection.js';
import { quoteIdent } from './connection.js';

/** Qualified names of one store's tables, and its wake-up channel. */
export interface Names {
  sets: string;
  runs: string;
  keys: string;
  idempotency: string;
  sessions: string;
  artifacts: string;
  artifactChunks: string;
  /** The function a statement calls to refuse a forbidden move (migration 5). */
  refuseMove: string;
  /** Each test's recent successful durations per environment (migration 6). */
  durations: string;
  /** Live worker processes (migration 7). */
  workers: string;
  /** The webhook outbox (migration 9). */
  setEvents: string;
  deliveries: string;
  attempts: string;
  /** Facts about the store, one row each (migration 15). */
  settings: string;
  channel: string;
}

export function namesOf(schema: string): Names {
  const s = quoteIdent(schema);
  return {
    sets: `${s}.test_run_sets`,
    runs: `${s}.test_runs`,
    keys: `${s}.api_keys`,
    idempotency: `${s}.idempotency_keys`,
    sessions: `${s}.sessions`,
    artifacts: `${s}.artifacts`,
    artifactChunks: `${s}.artifact_chunks`,
    refuseMove: `${s}.refuse_move`,
    durations: `${s}.test_durations`,
    workers: `${s}.workers`,
    setEvents: `${s}.set_events`,
    deliveries: `${s}.webhook_deliveries`,
    attempts: `${s}.webhook_attempts`,
    settings: `${s}.store_settings`,
    channel: channelOf(schema),
  };
}

/** The NOTIFY channel: per schema, so stores sharing a database do not wake each other. */
export function channelOf(schema: string): string {
  return `runset_${schema}_waiting`;
}

/** The database's clock, truncated to what is stored and read back (milliseconds). */
export const NOW = "date_trunc('milliseconds', now())";

/** The database's clock `ms` milliseconds on: a lease's or a key's expiry (`ms`: a placeholder such as `$4`). */
export function msFromNow(ms: string): string {
  return `now() + make_interval(secs => ${ms}::double precision / 1000)`;
}

/** PostgreSQL hands timestamps back as Dates (timestamptz). */
export type SetRow = rows.SetRow<Date>;
export type RunRow = rows.RunRow<Date>;
export type KeyRow = rows.KeyRow<Date>;


const SET_COLUMNS = 'id, env, status, created_at, started_at, ended_at, count_waiting, count_running, count_success, count_fail';
const RUN_COLUMNS = 'id, set_id, position, name, type, status, attempts, started_at, ended_at, duration_ms, error, output, ran_on, expected_ms';
export const KEY_COLUMNS = 'id, name, role, envs, expires_at, created_at, last_used_at, revoked_at';

// ── keys ──

export async function insertKey(q: Queryable, n: Names, key: NewApiKey): Promise<KeyRow> {
  const { rows } = await q.query<KeyRow>({
    name: 'runset.insertKey',
    text: `
      INSERT INTO ${n.keys} (id, name, hash, role, envs, expires_at, created_at)
      VALUES ($1, $2, $3, $4, $5::text[], $6::timestamptz, ${NOW}) RETURNING ${KEY_COLUMNS}`,
    values: [key.id, key.name, key.hash, key.role ?? 'admin', key.envs ? [...key.envs] : null, key.expiresAt ?? null],
  });
  return rows[0]!;
}

/**
 * Inserts the key only when the table holds none (revoked and expired keys
 * count); undefined when it holds one. In a transaction: the lock queues
 * processes starting at once, so the second sees the first's key. It blocks
 * key writes for a moment, never key lookups (reads take no conflicting lock).
 */
export async function insertFirstKey(tx: Queryable, n: Names, key: NewApiKey): Promise<KeyRow | undefined> {
  await tx.query(`LOCK TABLE ${n.keys} IN SHARE ROW EXCLUSIVE MODE`);
  const { rows } = await tx.query<KeyRow>({
    name: 'runset.insertFirstKey',
    text: `
      INSERT INTO ${n.keys} (id, name, hash, role, envs, expires_at, created_at)
      SELECT $1, $2, $3, $4, $5::text[], $6::timestamptz, ${NOW} WHERE NOT EXISTS (SELECT 1 FROM ${n.keys}) RETURNING ${KEY_COLUMNS}`,
    values: [key.id, key.name, key.hash, key.role ?? 'admin', key.envs ? [...key.envs] : null, key.expiresAt ?? null],
  });
  return rows[0];
}

export async function listKeys(q: Queryable, n: Names): Promise<KeyRow[]> {
  const { rows } = await q.query<KeyRow>({
    name: 'runset.listKeys',
    text: `SELECT ${KEY_COLUMNS} FROM ${n.keys} ORDER BY created_at, id`,
  });
  return rows;
}

/** Keeps the first revocation time; matches (and so counts) an already revoked key. */
export async function revokeKey(q: Queryable, n: Names, id: string): Promise<boolean> {
  const res = await q.query({
    name: 'runset.revokeKey',
    text: `UPDATE ${n.keys} SET revoked_at = COALESCE(revoked_at, ${NOW}) WHERE id = $1`,
    values: [id],
  });
  return res.rowCount === 1;
}

export async function findActiveKey(q: Queryable, n: Names, hash: string): Promise<KeyRow | undefined> {
  const { rows } = await q.query<KeyRow>({
    name: 'runset.findActiveKey',
    text: `SELECT ${KEY_COLUMNS} FROM ${n.keys} WHERE hash = $1 AND revoked_at IS NULL`,
    values: [hash],
  });
  return rows[0];
}

export async function touchKeys(q: Queryable, n: Names, ids: string[]): Promise<void> {
  await q.query({
    name: 'runset.touchKeys',
    text: `UPDATE ${n.keys} SET last_used_at = ${NOW} WHERE id = ANY($1::text[])`,
    values: [ids],
  });
}

// ── sets and members ──

async function insertSet(q: Queryable, n: Names, set: NewTestRunSet): Promise<void> {
  await q.query({
    name: 'runset.insertSet',
    text: `
      INSERT INTO ${n.sets} (id, env, status, created_at, count_waiting, variables, overrides, key_id, max_failures, labels)
      VALUES ($1, $2, 'WAITING', $3, $4, $5::json, $6::json, $7, $8, $9::jsonb)`,
    values: [set.id, set.env, set.createdAt, set.runs.length, JSON.stringify(set.variables), JSON.stringify(set.overrides), set.keyId, set.maxFailures, JSON.stringify(set.labels)],
  });
}

/** All members in one statement, in the given order (which is their claim order). */
async function insertRuns(q: Queryable, n: Names, set: NewTestRunSet): Promise<void> {
  const runs = set.runs;
  await q.query({
    name: 'runset.insertRuns',
    text: `
      INSERT INTO ${n.runs} (id, set_id, env, position, name, type, spec, status, batch_key, expected_ms)
      SELECT u.id, $1, $9, u.position, u.name, u.type, u.spec, 'WAITING', u.batch_key, u.expected_ms
      FROM unnest($2::text[], $3::integer[], $4::text[], $5::text[], $6::json[], $7::text[], $8::integer[])
        WITH ORDINALITY AS u(id, position, name, type, spec, batch_key, expected_ms, ord)
      ORDER BY u.ord`,
    values: [
      set.id,
      runs.map((r) => r.id),
      runs.map((r) => r.position),
      runs.map((r) => r.spec.name),
      runs.map((r) => r.spec.type),
      runs.map((r) => JSON.stringify(r.spec)),
      runs.map((r) => batchKeyOf(r.spec)),
      runs.map((r) => Math.round(r.expectedMs)),
      set.env,
    ],
  });
}

/** A new set and its members (inside the caller's transaction). */
export async function insertSetWithRuns(q: Queryable, n: Names, set: NewTestRunSet): Promise<void> {
  await insertSet(q, n, set);
  if (set.runs.length > 0) await insertRuns(q, n, set);
}

export async function getSet(q: Queryable, n: Names, id: string): Promise<SetRow | undefined> {
  const { rows } = await q.query<SetRow>({
    name: 'runset.getSet',
    text: `SELECT ${SET_COLUMNS} FROM ${n.sets} WHERE id = $1`,
    values: [id],
  });
  return rows[0];
}

/** The sets among `ids` that exist (the text id column takes malformed ones and finds nothing). */
export async function getSets(q: Queryable, n: Names, ids: readonly string[]): Promise<SetRow[]> {
  const { rows } = await q.query<SetRow>({
    name: 'runset.getSets',
    text: `SELECT ${SET_COLUMNS} FROM ${n.sets} WHERE id = ANY($1::text[])`,
    values: [[...new Set(ids)]],
  });
  return rows;
}

export async function listRuns(q: Queryable, n: Names, setId: string): Promise<RunRow[]> {
  const { rows } = await q.query<RunRow>({
    name: 'runset.listRuns',
    text: `SELECT ${RUN_COLUMNS} FROM ${n.runs} WHERE set_id = $1 ORDER BY position`,
    values: [setId],
  });
  return rows;
}

// ── wake-ups ──

/** Inside a transaction, PostgreSQL delivers it at COMMIT (and drops it on rollback). */
export async function notifyWaiting(q: Queryable, n: Names): Promise<void> {
  await q.query({ name: 'runset.notifyWaiting', text: "SELECT pg_notify($1, '')", values: [n.channel] });
}
