/**
 * Bulk-loads a history of ended sets straight into a store's tables, far faster
 * than creating and running them: for benches that need a large history
 * (bench:retention; bench:growth's 1,000 vs 1,000,000 sets). Every set ended
 * SUCCESS with all its members, one second apart, the newest `endedBefore`.
 *
 * - SQLite: multi-row INSERTs, 100,000 rows per transaction.
 * - PostgreSQL: `INSERT … SELECT … generate_series`, 10,000 sets per transaction.
 *
 * The store must be migrated (open it and call migrate() first) and, for SQLite,
 * not served by another process while this writes.
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';

export type HistoryTarget = { kind: 'sqlite'; file: string } | { kind: 'postgres'; connectionString: string; schema: string };

export interface HistoryShape {
  sets: number;
  membersPerSet: number;
  /** The newest set's end; each older one ended a second before the next. */
  endedBefore: Date;
  /** The sets' environment (default `bench`). */
  env?: string;
}

const SPEC = JSON.stringify({ name: 'loaded', type: 'command', run: ['true'], cwd: '/', tags: [], timeoutSeconds: 5, retries: 0 });

/** Loads the history; returns how long it took (ms). */
export async function loadEndedSets(target: HistoryTarget, shape: HistoryShape): Promise<number> {
  const started = performance.now();
  if (target.kind === 'sqlite') loadSqlite(target.file, shape);
  else await loadPostgres(target.connectionString, target.schema, shape);
  return performance.now() - started;
}

/** A uuid-shaped id, unique per load (`salt`) and per index. */
function id(salt: string, n: number): string {
  const hex = (salt + n.toString(16).padStart(12, '0')).slice(-32).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

function loadSqlite(file: string, shape: HistoryShape): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const salt = randomBytes(10).toString('hex');
  const env = shape.env ?? 'bench';
  const SETS_PER_INSERT = 50;
  const RUNS_PER_INSERT = 50;
  const setCols = '(?, ?, \'SUCCESS\', ?, ?, ?, 0, 0, ?, 0, \'{}\', \'{}\')';
  const runCols = '(?, ?, ?, \'loaded\', \'command\', ?, \'SUCCESS\', 1, ?, ?, 100, \'\')';
  const insertSets = (n: number) =>
    db.prepare(`INSERT INTO test_run_sets (id, env, status, created_at, started_at, ended_at, count_waiting, count_running, count_success, count_fail, variables, overrides) VALUES ${Array(n).fill(setCols).join(', ')}`);
  const insertRuns = (n: number) =>
    db.prepare(`INSERT INTO test_runs (id, set_id, position, name, type, spec, status, attempts, started_at, ended_at, duration_ms, output) VALUES ${Array(n).fill(runCols).join(', ')}`);
  const fullSets = insertSets(SETS_PER_INSERT);
  const fullRuns = insertRuns(RUNS_PER_INSERT);
  const newest = shape.endedBefore.getTime();
  let setRows: unknown[] = [];
  let runRows: unknown[] = [];
  let pendingSets = 0;
  let pendingRuns = 0;
  const flush = (force: boolean) => {
    if (pendingSets === SETS_PER_INSERT || (force && pendingSets > 0)) {
      (pendingSets === SETS_PER_INSERT ? fullSets : insertSets(pendingSets)).run(setRows);
      setRows = [];
      pendingSets = 0;
    }
    if (pendingRuns === RUNS_PER_INSERT || (force && pendingRuns > 0)) {
      (pendingRuns === RUNS_PER_INSERT ? fullRuns : insertRuns(pendingRuns)).run(runRows);
      runRows = [];
      pendingRuns = 0;
    }
  };
  const ROWS_PER_TRANSACTION = 100_000;
  const setsPerTransaction = Math.max(1, Math.floor(ROWS_PER_TRANSACTION / (shape.membersPerSet + 1)));
  const chunk = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const setId = id(salt, i * (shape.membersPerSet + 1));
      const ended = new Date(newest - (shape.sets - 1 - i) * 1000).toISOString();
      const began = new Date(newest - (shape.sets - 1 - i) * 1000 - 60_000).toISOString();
      setRows.push(setId, env, began, began, ended, shape.membersPerSet);
      pendingSets++;
      flush(false);
      for (let p = 0; p < shape.membersPerSet; p++) {
        runRows.push(id(salt, i * (shape.membersPerSet + 1) + p + 1), setId, p, SPEC, began, ended);
        pendingRuns++;
        // Members name their set: it must be in first.
        if (pendingRuns === RUNS_PER_INSERT) flush(pendingSets > 0);
      }
    }
    flush(true);
  });
  try {
    for (let from = 0; from < shape.sets; from += setsPerTransaction) chunk(from, Math.min(shape.sets, from + setsPerTransaction));
  } finally {
    db.close();
  }
}

async function loadPostgres(connectionString: string, schema: string, shape: HistoryShape): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  const s = `"${schema.replace(/"/g, '""')}"`;
  const salt = randomBytes(8).toString('hex');
  const SETS_PER_TRANSACTION = 10_000;
  // Set g ended (sets - g) seconds before endedBefore; ids are md5 of the salt and g, uuid-shaped.
  const setId = (g: string) => `md5($1 || ${g})::uuid::text`;
  try {
    for (let from = 1; from <= shape.sets; from += SETS_PER_TRANSACTION) {
      const to = Math.min(shape.sets, from + SETS_PER_TRANSACTION - 1);
      // $1-$6 are shared by both statements; $7 is the environment, then the members' spec.
      const common = [salt, from, to, shape.sets, shape.endedBefore.toISOString(), shape.membersPerSet];
      const ended = `$5::timestamptz - make_interval(secs => $4 - g)`;
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO ${s}.test_run_sets (id, env, status, created_at, started_at, ended_at, count_waiting, count_success, variables, overrides)
         SELECT ${setId('g')}, $7, 'SUCCESS', ${ended} - interval '1 minute', ${ended} - interval '1 minute', ${ended}, 0, $6, '{}', '{}'
         FROM generate_series($2::int, $3::int) AS g`,
        [...common, shape.env ?? 'bench'],
      );
      await client.query(
        `INSERT INTO ${s}.test_runs (id, set_id, position, name, type, spec, status, attempts, started_at, ended_at, duration_ms, output)
         SELECT md5($1 || g || '/' || p)::uuid::text, ${setId('g')}, p, 'loaded', 'command', $7::json, 'SUCCESS', 1, ${ended} - interval '1 minute', ${ended}, 100, ''
         FROM generate_series($2::int, $3::int) AS g, generate_series(0, $6 - 1) AS p`,
        [...common, SPEC],
      );
      await client.query('COMMIT');
    }
    await client.query(`ANALYZE ${s}.test_run_sets, ${s}.test_runs`);
  } finally {
    await client.end();
  }
}
