/**
 * bench:history's data: N ended members bulk-loaded straight into a migrated
 * store, each store by one INSERT … SELECT over generated rows (SQLite: a
 * recursive CTE; PostgreSQL: generate_series), inside the database: no row
 * crosses from Node. The same formulas in both, and in `expected` below, so the
 * bench knows which test, cursor and run to ask for without reading them back.
 *
 * Shape: sets of TESTS_PER_SET members, one per test; one set a minute; every
 * tenth set in `preview`, the rest in `staging`; each set labelled with a
 * commit that two consecutive sets share (so flaky pairs exist) and branch main.
 * A member fails 3 % of the time, passes after a retry 3 %, lasts 100-999 ms.
 * The set rows' counts are not derived from their members (the history reads
 * never look at them).
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { encodeNameCursor, encodeRunCursor } from '../src/store/history.js';

export const TESTS_PER_SET = 250;
const AREAS = ['checkout', 'login', 'search', 'cart', 'profile', 'admin', 'billing', 'orders', 'settings', 'signup'];
/** 2030-01-01T00:00:00.000Z: the first set's creation. */
const BASE_MS = Date.UTC(2030, 0, 1);

export function testName(j: number): string {
  return `${AREAS[j % AREAS.length]}/test-${String(j).padStart(3, '0')}`;
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
const memberId = (i: number, j: number) => `${hex(i, 8)}-${hex(j, 4)}-4000-8000-000000000000`;
const endedMs = (i: number, j: number) => BASE_MS + i * 60_000 + (j + 1) * 100;
const isPreview = (i: number) => i % 10 === 9;

/** What the bench asks for: a test, and cursors deep into the tests list and into its history. */
export function expected(members: number) {
  const sets = members / TESTS_PER_SET;
  const j = 7;
  const staging = Array.from({ length: sets }, (_, i) => sets - 1 - i).filter((i) => !isPreview(i));
  const deep = staging[Math.floor(staging.length * 0.8)]!;
  const names = Array.from({ length: TESTS_PER_SET }, (_, k) => testName(k)).sort();
  return {
    name: testName(j),
    runsPerTest: staging.length,
    /** After 80 % of the test's staging runs. */
    historyCursor: encodeRunCursor({ endedAt: new Date(endedMs(deep, j)).toISOString(), id: memberId(deep, j) }),
    /** After 80 % of the names. */
    testsCursor: encodeNameCursor(names[Math.floor(names.length * 0.8) - 1]!),
  };
}

const AREA_VALUES = AREAS.map((a, k) => `(${k}, '${a}')`).join(', ');

export function loadSqlite(file: string, members: number): void {
  const db = new Database(file);
  const iso = (ms: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', (${ms}) / 1000.0, 'unixepoch')`;
  try {
    db.pragma('journal_mode = WAL');
    db.transaction(() => {
      db.prepare(`
        WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < @sets)
        INSERT INTO test_run_sets (id, env, status, created_at, started_at, ended_at, count_waiting, count_success, variables, overrides, labels)
        SELECT printf('%08x-0000-4000-8000-000000000000', i), CASE WHEN i % 10 = 9 THEN 'preview' ELSE 'staging' END, 'SUCCESS',
          ${iso('@base + i * 60000')}, ${iso('@base + i * 60000')}, ${iso(`@base + i * 60000 + ${TESTS_PER_SET * 100}`)}, 0, ${TESTS_PER_SET}, '{}', '{}',
          json_object('commit', printf('c%d', i / 2), 'branch', 'main')
        FROM s`).run({ sets: members / TESTS_PER_SET, base: BASE_MS });
      db.prepare(`
        WITH RECURSIVE t(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM t WHERE j + 1 < ${TESTS_PER_SET}),
          areas(k, area) AS (VALUES ${AREA_VALUES})
        INSERT INTO test_runs (id, set_id, env, position, name, type, spec, status, attempts, started_at, ended_at, duration_ms, error, output)
        SELECT printf('%08x-%04x-4000-8000-000000000000', x.i, x.j), x.set_id, x.env, x.j, printf('%s/test-%03d', a.area, x.j), 'command', '{}',
          CASE WHEN x.h < 3 THEN 'FAIL' ELSE 'SUCCESS' END, CASE WHEN x.h BETWEEN 3 AND 5 THEN 2 ELSE 1 END,
          ${iso('x.e - x.d')}, ${iso('x.e')}, x.d, CASE WHEN x.h < 3 THEN 'expected 200, got 500' || char(10) || '    at check' END, ''
        FROM (
          SELECT s.rowid - 1 AS i, t.j, s.id AS set_id, s.env, ((s.rowid - 1) * 7919 + t.j * 104729) % 100 AS h,
            100 + ((s.rowid - 1) * 31 + t.j * 17) % 900 AS d, @base + (s.rowid - 1) * 60000 + (t.j + 1) * 100 AS e
          FROM test_run_sets s, t
        ) x JOIN areas a ON a.k = x.j % 10`).run({ base: BASE_MS });
    })();
    db.exec('ANALYZE');
  } finally {
    db.close();
  }
}

export async function loadPostgres(url: string, schema: string, members: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const s = `"${schema}"`;
  const ts = (ms: string) => `date_trunc('milliseconds', to_timestamp((${ms}) / 1000.0))`;
  try {
    await client.query(
      `INSERT INTO ${s}.test_run_sets (id, env, status, created_at, started_at, ended_at, count_waiting, count_success, variables, overrides, labels)
       SELECT lpad(to_hex(i), 8, '0') || '-0000-4000-8000-000000000000', CASE WHEN i % 10 = 9 THEN 'preview' ELSE 'staging' END, 'SUCCESS',
         ${ts('$2::bigint + i * 60000')}, ${ts('$2::bigint + i * 60000')}, ${ts(`$2::bigint + i * 60000 + ${TESTS_PER_SET * 100}`)}, 0, ${TESTS_PER_SET}, '{}', '{}',
         jsonb_build_object('commit', 'c' || (i / 2), 'branch', 'main')
       FROM generate_series(0, $1::int - 1) i`,
      [members / TESTS_PER_SET, BASE_MS],
    );
    await client.query(
      `INSERT INTO ${s}.test_runs (id, set_id, env, position, name, type, spec, status, attempts, started_at, ended_at, duration_ms, error, output)
       SELECT lpad(to_hex(i), 8, '0') || '-' || lpad(to_hex(j), 4, '0') || '-4000-8000-000000000000', lpad(to_hex(i), 8, '0') || '-0000-4000-8000-000000000000',
         CASE WHEN i % 10 = 9 THEN 'preview' ELSE 'staging' END, j, ($3::text[])[j % 10 + 1] || '/test-' || lpad(j::text, 3, '0'), 'command', '{}',
         CASE WHEN h < 3 THEN 'FAIL' ELSE 'SUCCESS' END, CASE WHEN h BETWEEN 3 AND 5 THEN 2 ELSE 1 END,
         ${ts('e - d')}, ${ts('e')}, d, CASE WHEN h < 3 THEN E'expected 200, got 500\\n    at check' END, ''
       FROM (
         SELECT i, j, (i::bigint * 7919 + j * 104729) % 100 AS h, 100 + (i * 31 + j * 17) % 900 AS d, $2::bigint + i * 60000 + (j + 1) * 100 AS e
         FROM generate_series(0, $1::int - 1) i CROSS JOIN generate_series(0, ${TESTS_PER_SET - 1}) j
       ) x`,
      [members / TESTS_PER_SET, BASE_MS, AREAS],
    );
    // What autovacuum does to a table in steady state: statistics, and the visibility
    // map that lets the tests list read each window from the index alone.
    await client.query(`VACUUM (ANALYZE) ${s}.test_runs, ${s}.test_run_sets`);
  } finally {
    await client.end();
  }
}
