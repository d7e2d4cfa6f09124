/**
 * What every SQLite sub-store's statements share: the stored rows' shapes as
 * SQLite hands them back, the column lists and the clock (the lease fence is
 * both stores', ../sql/member-moves.ts).
 * Each sub-store prepares its own statements (./sets.ts, ./moves.ts, ./keys.ts…).
 */
import type * as rows from '../rows.js';

/** SQLite hands timestamps back as the ISO strings they were written as. */
export type SetRow = rows.SetRow<string>;
export type RunRow = rows.RunRow<string>;
export type KeyRow = rows.KeyRow<string>;

export const SET_COLUMNS = 'id, env, status, created_at, started_at, ended_at, count_waiting, count_running, count_success, count_fail, count_failing';
export const KEY_COLUMNS = 'id, name, role, envs, expires_at, created_at, last_used_at, revoked_at';

/** The embedded store's clock: timestamps are stored, and come back, as ISO strings. */
export function now(): string {
  return new Date().toISOString();
}

/** This store's tables, as the SQL both stores share names them (../sql/). */
export const TABLES = { runs: 'test_runs', sets: 'test_run_sets' } as const;
