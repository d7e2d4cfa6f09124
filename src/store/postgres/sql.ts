/**
 * The PostgreSQL store's SQL, one named operation per function, kept apart from
 * the code that sequences them into transactions (src/store/postgres/index.ts).
 *
 * - Every statement is schema-qualified (no search_path games) and prepared by
 *   name, once per pooled connection.
 * - Every worker write is fenced by (id, worker_id, claims) on a leased member
 *   (RUNNING, or reserved: WAITING with a lease, see claimMembers): a worker
 *   whose lease was taken over matches no row and changes nothing.
 * - Every clock reading is the database's (`now()`), never a worker's; stored
 *   timestamps are truncated to milliseconds so that what is read back is exactly
 *   what was written, in the same `toISOString()` form as the SQLite store.
 * - Rows are locked members first, then sets in id order, in every transaction,
 *   so concurrent claimers, finishers and reapers cannot deadlock.
 */
import type * as rows from '../rows.js';
import type { RunState } from '../../core/states.js';
import type { NewApiKey } from '../store.js';
import type { NewTestRun, NewTestRunSet, RunOutcome } from '../../core/types.js';
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
    channel: channelOf(schema),
  };
}

/** The NOTIFY channel: per schema, so stores sharing a database do not wake each other. */
export function channelOf(schema: string): string {
  return `runset_${schema}_waiting`;
}

const NOW = "date_trunc('milliseconds', now())";
// worker_id is set only on leased members, so this matches RUNNING and reserved ones alike.
const FENCED = "r.id = $1 AND r.worker_id = $2 AND r.claims = $3 AND r.status IN ('WAITING', 'RUNNING')";

/** PostgreSQL hands timestamps back as Dates (timestamptz). */
export type SetRow = rows.SetRow<Date>;
export type RunRow = rows.RunRow<Date>;
export type KeyRow = rows.KeyRow<Date>;

export interface ClaimRow {
  id: string;
  set_id: string;
  spec: unknown;
  variables: unknown;
  claims: number;
  batch_key: string | null;
}

/** A member a worker write moved: its set, and the state it was in (RUNNING, or WAITING when reserved). */
export interface MovedRow {
  set_id: string;
  previous: RunState;
}

/** A set row locked for update, with the transaction's clock reading. */
export type LockedSetRow = Pick<SetRow, 'id' | 'started_at' | 'count_waiting' | 'count_running' | 'count_success' | 'count_fail'> & {
  at: Date;
};

export interface SetProgress {
  id: string;
  status: RunState;
  startedAt: string | null;
  endedAt: string | null;
  counts: Record<RunState, number>;
}

export interface LeaseParams {
  runId: string;
  workerId: string;
  claim: number;
}

const SET_COLUMNS = 'id, env, status, created_at, started_at, ended_at, count_waiting, count_running, count_success, count_fail';
const RUN_COLUMNS = 'id, set_id, position, name, type, status, attempts, started_at, ended_at, duration_ms, error, output';
const KEY_COLUMNS = 'id, name, created_at, last_used_at, revoked_at';

// ── keys ──

export async function insertKey(q: Queryable, n: Names, key: NewApiKey): Promise<KeyRow> {
  const { rows } = await q.query<KeyRow>({
    name: 'runset.insertKey',
    text: `INSERT INTO ${n.keys} (id, name, hash, created_at) VALUES ($1, $2, $3, ${NOW}) RETURNING ${KEY_COLUMNS}`,
    values: [key.id, key.name, key.hash],
  });
  return rows[0]!;
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

export async function insertSet(q: Queryable, n: Names, set: NewTestRunSet): Promise<void> {
  await q.query({
    name: 'runset.insertSet',
    text: `
      INSERT INTO ${n.sets} (id, env, status, created_at, count_waiting, variables, overrides, key_id)
      VALUES ($1, $2, 'WAITING', $3, $4, $5::json, $6::json, $7)`,
    values: [set.id, set.env, set.createdAt, set.runs.length, JSON.stringify(set.variables), JSON.stringify(set.overrides), set.keyId],
  });
}

/** All members in one statement, in the given order (which is their claim order). */
export async function insertRuns(q: Queryable, n: Names, setId: string, runs: NewTestRun[]): Promise<void> {
  await q.query({
    name: 'runset.insertRuns',
    text: `
      INSERT INTO ${n.runs} (id, set_id, position, name, type, spec, status, batch_key)
      SELECT u.id, $1, u.position, u.name, u.type, u.spec, 'WAITING', u.batch_key
      FROM unnest($2::text[], $3::integer[], $4::text[], $5::text[], $6::json[], $7::text[])
        WITH ORDINALITY AS u(id, position, name, type, spec, batch_key, ord)
      ORDER BY u.ord`,
    values: [
      setId,
      runs.map((r) => r.id),
      runs.map((r) => r.position),
      runs.map((r) => r.spec.name),
      runs.map((r) => r.spec.type),
      runs.map((r) => JSON.stringify(r.spec)),
      runs.map((r) => batchKeyOf(r.spec)),
    ],
  });
}

export async function getSet(q: Queryable, n: Names, id: string): Promise<SetRow | undefined> {
  const { rows } = await q.query<SetRow>({
    name: 'runset.getSet',
    text: `SELECT ${SET_COLUMNS} FROM ${n.sets} WHERE id = $1`,
    values: [id],
  });
  return rows[0];
}

export async function listRuns(q: Queryable, n: Names, setId: string): Promise<RunRow[]> {
  const { rows } = await q.query<RunRow>({
    name: 'runset.listRuns',
    text: `SELECT ${RUN_COLUMNS} FROM ${n.runs} WHERE set_id = $1 ORDER BY position`,
    values: [setId],
  });
  return rows;
}

/** Locks the given sets in id order (the one order every transaction uses). */
export async function lockSets(q: Queryable, n: Names, ids: string[]): Promise<LockedSetRow[]> {
  const { rows } = await q.query<LockedSetRow>({
    name: 'runset.lockSets',
    text: `
      SELECT id, started_at, count_waiting, count_running, count_success, count_fail, ${NOW} AS at
      FROM ${n.sets} WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`,
    values: [ids],
  });
  return rows;
}

/** Writes the recomputed progress of several (locked) sets in one statement. */
export async function updateSetProgress(q: Queryable, n: Names, sets: SetProgress[]): Promise<void> {
  await q.query({
    name: 'runset.updateSetProgress',
    text: `
      UPDATE ${n.sets} AS s SET status = v.status, started_at = v.started_at, ended_at = v.ended_at,
        count_waiting = v.w, count_running = v.r, count_success = v.ok, count_fail = v.ko
      FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[],
                  $5::integer[], $6::integer[], $7::integer[], $8::integer[])
        AS v(id, status, started_at, ended_at, w, r, ok, ko)
      WHERE s.id = v.id`,
    values: [
      sets.map((s) => s.id),
      sets.map((s) => s.status),
      sets.map((s) => s.startedAt),
      sets.map((s) => s.endedAt),
      sets.map((s) => s.counts.WAITING),
      sets.map((s) => s.counts.RUNNING),
      sets.map((s) => s.counts.SUCCESS),
      sets.map((s) => s.counts.FAIL),
    ],
  });
}

// ── scheduling ──

/**
 * Takes up to `limit` unleased waiting members, oldest first, skipping rows
 * another claimer holds, and leases them until the database's now() + leaseMs.
 * A member with a batch key is reserved rather than started: it stays WAITING.
 */
export async function claimMembers(q: Queryable, n: Names, workerId: string, limit: number, leaseMs: number): Promise<ClaimRow[]> {
  const { rows } = await q.query<ClaimRow>({
    name: 'runset.claimMembers',
    text: `
      WITH picked AS (
        SELECT id FROM ${n.runs} WHERE status = 'WAITING' AND worker_id IS NULL ORDER BY seq LIMIT $2 FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE ${n.runs} AS r SET status = CASE WHEN r.batch_key IS NULL THEN 'RUNNING' ELSE 'WAITING' END,
          claims = r.claims + 1, worker_id = $1,
          lease_expires_at = now() + make_interval(secs => $3::double precision / 1000),
          started_at = CASE WHEN r.batch_key IS NULL THEN COALESCE(r.started_at, ${NOW}) ELSE r.started_at END
        FROM picked WHERE r.id = picked.id
        RETURNING r.id, r.set_id, r.spec, r.claims, r.seq, r.batch_key
      )
      SELECT c.id, c.set_id, c.spec, s.variables, c.claims, c.batch_key
      FROM claimed c JOIN ${n.sets} s ON s.id = c.set_id
      ORDER BY c.seq`,
    values: [workerId, limit, leaseMs],
  });
  return rows;
}

export async function heartbeat(q: Queryable, n: Names, lease: LeaseParams, leaseMs: number, attempts: number): Promise<boolean> {
  const res = await q.query({
    name: 'runset.heartbeat',
    text: `
      UPDATE ${n.runs} AS r SET lease_expires_at = now() + make_interval(secs => $4::double precision / 1000), attempts = $5
      WHERE ${FENCED}`,
    values: [lease.runId, lease.workerId, lease.claim, leaseMs, attempts],
  });
  return res.rowCount === 1;
}

/** Ends a member under its lease; returns its set and the state it left, or undefined when the lease is not ours. */
export async function finishMember(q: Queryable, n: Names, lease: LeaseParams, outcome: RunOutcome): Promise<MovedRow | undefined> {
  const { rows } = await q.query<MovedRow>({
    name: 'runset.finishMember',
    text: `
      WITH held AS (SELECT r.id, r.status FROM ${n.runs} AS r WHERE ${FENCED} FOR UPDATE)
      UPDATE ${n.runs} AS r SET status = $4, attempts = $5, error = $6, output = $7, duration_ms = $8,
        ended_at = ${NOW}, worker_id = NULL, lease_expires_at = NULL
      FROM held WHERE r.id = held.id
      RETURNING r.set_id, held.status AS previous`,
    values: [
      lease.runId, lease.workerId, lease.claim,
      outcome.status, outcome.attempts, outcome.error, outcome.output, Math.round(outcome.durationMs),
    ],
  });
  return rows[0];
}

/** Gives leased members back to WAITING (no lost lease counted); returns each one released, with the state it left. */
export async function releaseMembers(q: Queryable, n: Names, leases: LeaseParams[]): Promise<MovedRow[]> {
  const { rows } = await q.query<MovedRow>({
    name: 'runset.releaseMembers',
    text: `
      WITH mine AS (
        SELECT r.id, r.status FROM ${n.runs} AS r
        JOIN unnest($1::text[], $2::text[], $3::integer[]) AS l(id, worker_id, claims)
          ON r.id = l.id AND r.worker_id = l.worker_id AND r.claims = l.claims
        WHERE r.status IN ('WAITING', 'RUNNING')
        ORDER BY r.id FOR UPDATE OF r
      )
      UPDATE ${n.runs} AS r SET status = 'WAITING', worker_id = NULL, lease_expires_at = NULL
      FROM mine WHERE r.id = mine.id
      RETURNING r.set_id, mine.status AS previous`,
    values: [leases.map((l) => l.runId), leases.map((l) => l.workerId), leases.map((l) => l.claim)],
  });
  return rows;
}

/**
 * Members whose lease expired by the database's clock: back to WAITING, or FAIL
 * with `error` once this is their `maxLostLeases`-th lost lease. Rows a finisher
 * holds right now are skipped: that worker is alive.
 */
export async function reapMembers(
  q: Queryable,
  n: Names,
  maxLostLeases: number,
  error: string,
): Promise<Array<MovedRow & { status: 'WAITING' | 'FAIL' }>> {
  const { rows } = await q.query<MovedRow & { status: 'WAITING' | 'FAIL' }>({
    name: 'runset.reapMembers',
    text: `
      WITH expired AS (
        SELECT id, status FROM ${n.runs}
        WHERE lease_expires_at < now() AND status IN ('WAITING', 'RUNNING')
        ORDER BY id FOR UPDATE SKIP LOCKED
      )
      UPDATE ${n.runs} AS r SET
        status = CASE WHEN r.lost_leases + 1 < $1 THEN 'WAITING' ELSE 'FAIL' END,
        error = CASE WHEN r.lost_leases + 1 < $1 THEN r.error ELSE $2 END,
        ended_at = CASE WHEN r.lost_leases + 1 < $1 THEN r.ended_at ELSE ${NOW} END,
        lost_leases = r.lost_leases + 1, worker_id = NULL, lease_expires_at = NULL
      FROM expired WHERE r.id = expired.id
      RETURNING r.set_id, r.status, expired.status AS previous`,
    values: [maxLostLeases, error],
  });
  return rows;
}

// ── wake-ups ──

/** Inside a transaction, PostgreSQL delivers it at COMMIT (and drops it on rollback). */
export async function notifyWaiting(q: Queryable, n: Names): Promise<void> {
  await q.query({ name: 'runset.notifyWaiting', text: "SELECT pg_notify($1, '')", values: [n.channel] });
}
