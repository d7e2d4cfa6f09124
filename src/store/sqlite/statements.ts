/**
 * The SQLite store's SQL, as named prepared statements. Every worker write is
 * fenced by (worker_id, claims): a worker whose lease was taken over matches no
 * row and so changes nothing. Batches and artifacts are in ./batches.ts, keys in
 * ./keys.ts.
 */
import type Database from 'better-sqlite3';
import type * as rows from '../rows.js';

/** SQLite hands timestamps back as the ISO strings they were written as. */
export type SetRow = rows.SetRow<string>;
export type RunRow = rows.RunRow<string>;
export type KeyRow = rows.KeyRow<string>;

export const KEY_COLUMNS = 'id, name, role, envs, expires_at, created_at, last_used_at, revoked_at';

export type Statements = Record<
  | 'insertSet' | 'insertRun' | 'getSet' | 'updateSetProgress' | 'listRuns'
  | 'waitingRuns' | 'waitingRunsSkipping' | 'claimRun' | 'heartbeat' | 'renewLease' | 'leaseStatus' | 'finishRun' | 'holdsOutcome' | 'releaseRun' | 'expiredRuns' | 'requeueRun' | 'failLostRun',
  Database.Statement
>;

export function prepareStatements(db: Database.Database): Statements {
  // A lease covers RUNNING members and reserved ones (WAITING, leased, not begun:
  // see claimRun); a member nobody holds has worker_id NULL and matches neither.
  const fenced = 'id = @id AND worker_id = @worker_id AND claims = @claims AND status IN (\'WAITING\', \'RUNNING\')';
  return {
    insertSet: db.prepare(`
      INSERT INTO test_run_sets (id, env, status, created_at, count_waiting, variables, overrides, key_id, max_failures, labels)
      VALUES (@id, @env, 'WAITING', @created_at, @count_waiting, @variables, @overrides, @key_id, @max_failures, @labels)`),
    insertRun: db.prepare(`
      INSERT INTO test_runs (id, set_id, env, position, name, type, spec, status, batch_key, expected_ms)
      VALUES (@id, @set_id, @env, @position, @name, @type, @spec, 'WAITING', @batch_key, @expected_ms)`),
    getSet: db.prepare(`
      SELECT id, env, status, created_at, started_at, ended_at, count_waiting, count_running, count_success, count_fail
      FROM test_run_sets WHERE id = ?`),
    updateSetProgress: db.prepare(`
      UPDATE test_run_sets SET status = @status, started_at = @started_at, ended_at = @ended_at,
        count_waiting = @count_waiting, count_running = @count_running,
        count_success = @count_success, count_fail = @count_fail
      WHERE id = @id`),
    listRuns: db.prepare(`
      SELECT id, set_id, position, name, type, status, attempts, started_at, ended_at, duration_ms, error, output, ran_on, expected_ms
      FROM test_runs WHERE set_id = ? ORDER BY position`),

    waitingRuns: db.prepare("SELECT id, set_id FROM test_runs WHERE status = 'WAITING' AND worker_id IS NULL ORDER BY rowid LIMIT ?"),
    // The same, leaving out the batch keys of a JSON array (ClaimRequest.skipBatchKeys), and
    // only of one set and of some environments when asked; apart so the usual claim stays as simple.
    waitingRunsSkipping: db.prepare(`
      SELECT id, set_id FROM test_runs WHERE status = 'WAITING' AND worker_id IS NULL
        AND (batch_key IS NULL OR batch_key NOT IN (SELECT value FROM json_each(@skip)))
        AND (@set_id IS NULL OR set_id = @set_id) AND (@envs IS NULL OR env IN (SELECT value FROM json_each(@envs)))
      ORDER BY rowid LIMIT @limit`),
    // A member with a batch key is claimed reserved: leased but still WAITING, until its case begins.
    claimRun: db.prepare(`
      UPDATE test_runs SET status = CASE WHEN batch_key IS NULL THEN 'RUNNING' ELSE 'WAITING' END,
        claims = claims + 1, worker_id = @worker_id, lease_expires_at = @lease_expires_at,
        started_at = CASE WHEN batch_key IS NULL THEN COALESCE(started_at, @at) ELSE started_at END,
        ran_on = CASE WHEN batch_key IS NULL THEN @worker_id ELSE ran_on END
      WHERE id = @id AND status = 'WAITING' AND worker_id IS NULL
      RETURNING claims, spec, batch_key, expected_ms`),
    heartbeat: db.prepare(`
      UPDATE test_runs SET lease_expires_at = @lease_expires_at, attempts = @attempts WHERE ${fenced}`),
    renewLease: db.prepare(`UPDATE test_runs SET lease_expires_at = @lease_expires_at WHERE ${fenced}`),
    leaseStatus: db.prepare(`SELECT status, set_id FROM test_runs WHERE ${fenced}`),
    finishRun: db.prepare(`
      UPDATE test_runs SET status = @status, attempts = @attempts, error = @error, output = @output,
        duration_ms = @duration_ms, ended_at = @at, worker_id = NULL, lease_expires_at = NULL
      WHERE ${fenced}`),
    // A finish retried after its first answer was lost: did that one write this outcome under this claim?
    // (A member the reaper failed under the same claim holds the reaper's outcome, not ours.)
    holdsOutcome: db.prepare(`
      SELECT 1 FROM test_runs
      WHERE id = @id AND claims = @claims AND worker_id IS NULL AND status = @status AND attempts = @attempts
        AND error IS @error AND duration_ms = @duration_ms`),
    releaseRun: db.prepare(`
      UPDATE test_runs SET status = 'WAITING', worker_id = NULL, lease_expires_at = NULL
      WHERE ${fenced}`),
    expiredRuns: db.prepare(`
      SELECT id, set_id, status, claims, lost_leases FROM test_runs
      WHERE lease_expires_at < ? AND status IN ('WAITING', 'RUNNING')`),
    requeueRun: db.prepare(`
      UPDATE test_runs SET status = 'WAITING', worker_id = NULL, lease_expires_at = NULL, lost_leases = lost_leases + 1
      WHERE id = @id AND claims = @claims AND status IN ('WAITING', 'RUNNING')`),
    failLostRun: db.prepare(`
      UPDATE test_runs SET status = 'FAIL', error = @error, lost_leases = lost_leases + 1, ended_at = @at, worker_id = NULL, lease_expires_at = NULL
      WHERE id = @id AND claims = @claims AND status IN ('WAITING', 'RUNNING')`),
  };
}

/** The embedded store's clock: timestamps are stored, and come back, as ISO strings. */
export function now(): string {
  return new Date().toISOString();
}
