/**
 * What every PostgreSQL sub-store's statements share, and the rules they all
 * follow. Each sub-store (./sets.ts, ./claims.ts, ./keys.ts…) holds its own SQL,
 * one named operation per function or method.
 *
 * - Every statement is schema-qualified (no search_path games) and prepared by
 *   name, once per pooled connection.
 * - Member moves (claims, outcomes, releases, reaping) are in ./moves.ts, and
 *   carry to their sets through the roll-up both stores share (../sql/set-rollup.ts).
 * - Every clock reading is the database's (`now()`), never a worker's; stored
 *   timestamps are truncated to milliseconds so that what is read back is exactly
 *   what was written, in the same `toISOString()` form as the SQLite store.
 * - Rows are locked members first, then sets in id order, in every statement,
 *   so concurrent claimers, finishers and reapers cannot deadlock.
 */
import type * as rows from '../rows.js';
import { quoteIdent, type Queryable } from './connection.js';
import { POSTGRES } from '../sql/dialect.js';

/** Qualified names of one store's tables, and its wake-up channel. */
export interface Names {
  sets: string;
  runs: string;
  /** The runs result cases add to history (migration 25). */
  cases: string;
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
  /** Suite versions, the names pointing at them, and their archives' bytes (migration 17). */
  suiteVersions: string;
  suiteNames: string;
  quarantine: string;
  suiteChunks: string;
  channel: string;
}

export function namesOf(schema: string): Names {
  const s = quoteIdent(schema);
  return {
    sets: `${s}.test_run_sets`,
    runs: `${s}.test_runs`,
    cases: `${s}.test_run_cases`,
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
    suiteVersions: `${s}.suite_versions`,
    suiteNames: `${s}.suite_names`,
    quarantine: `${s}.quarantine`,
    suiteChunks: `${s}.suite_chunks`,
    channel: channelOf(schema),
  };
}

/** The NOTIFY channel: per schema, so stores sharing a database do not wake each other. */
export function channelOf(schema: string): string {
  return `runset_${schema}_waiting`;
}

/** The database's clock, truncated to what is stored and read back (milliseconds): the dialect's (../sql/dialect.ts). */
export const NOW = POSTGRES.now;

/** The database's clock `ms` milliseconds on: a lease's or a key's expiry (`ms`: a placeholder such as `$4`); the dialect's. */
export const msFromNow = POSTGRES.msFromNow;

/** PostgreSQL hands timestamps back as Dates (timestamptz). */
export type SetRow = rows.SetRow<Date>;
export type RunRow = rows.RunRow<Date>;
export type KeyRow = rows.KeyRow<Date>;

export const SET_COLUMNS = 'id, env, status, created_at, started_at, ended_at, count_waiting, count_running, count_success, count_fail, count_failing';
export const KEY_COLUMNS = 'id, name, role, envs, expires_at, created_at, last_used_at, revoked_at';

// ── wake-ups ──

/** Inside a transaction, PostgreSQL delivers it at COMMIT (and drops it on rollback). */
export async function notifyWaiting(q: Queryable, n: Names): Promise<void> {
  await q.query({ name: 'runset.notifyWaiting', text: "SELECT pg_notify($1, '')", values: [n.channel] });
}
