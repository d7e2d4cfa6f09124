/**
 * The PostgreSQL store's test history: every read walks the partial index
 * test_runs_history (env, name COLLATE "C", ended_at, id) INCLUDE (status,
 * attempts, duration_ms, set_id, type, starts) WHERE ended_at IS NOT NULL
 * (migrations 13, 14 and 29); the query plans are in bench/README.md (bench:history).
 * Names compare COLLATE "C" everywhere, to match that index and SQLite's order.
 *
 * A tests page is one statement: a recursive walk of the environment's distinct
 * names (one index probe per name: a "loose index scan", which PostgreSQL does
 * not do by itself for DISTINCT), filtered and cut to the page, each name then
 * joined to its latest ended runs. PostgreSQL evaluates the walk only as far as
 * the page needs it.
 */
import type pg from 'pg';
import * as history from '../history.js';
import type { HistoryPage, HistoryRow, ListTestsQuery, TestHistoryStore, TestRunsQuery, TestsPage, TestWindow, WindowRow } from '../history.js';
import { withClient } from './connection.js';
import { CASE_TEST_TYPE } from '../../core/result-cases.js';
import type { Names } from './statements.js';

const { toWindowRun, toHistoryRun } = history.historyMappers<Date>((value) => value.toISOString());

const ENDED_IN_ENV = 'r.env = $1 AND r.ended_at IS NOT NULL';

/**
 * The next name after `after` (SQL) among the environment's ended members and
 * the cases their results add to history (src/core/result-cases.ts); LEAST
 * skips a side that has none.
 */
function nextName(n: Names, after: string | null): string {
  const past = (col: string) => (after === null ? '' : `AND ${col} COLLATE "C" > ${after}`);
  return `LEAST(
    (SELECT min(r.name COLLATE "C") FROM ${n.runs} r WHERE ${ENDED_IN_ENV} ${past('r.name')}),
    (SELECT min(c.name COLLATE "C") FROM ${n.cases} c WHERE c.env = $1 ${past('c.name')}))`;
}

/** A tests page (exported, as historySql, so that bench:history shows the plan of exactly what runs). */
export function testsPageSql(n: Names, fromCursor: boolean): string {
  return `
    WITH RECURSIVE walk(name) AS (
      SELECT ${nextName(n, fromCursor ? '$5' : null)}
      UNION ALL
      SELECT ${nextName(n, 'w.name')} FROM walk w WHERE w.name IS NOT NULL
    ), page AS (
      SELECT name FROM walk
      WHERE name IS NOT NULL
        AND ($2::text IS NULL OR strpos(translate(name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), $2::text) > 0)
      LIMIT $3
    )
    SELECT p.name, x.*,
      -- The window is covered by the index; the error is read for failures alone
      -- (a subquery in CASE runs only when its branch is taken, where a join
      -- looked up every row). The commit is one primary-key read per run, where
      -- a join chose to hash every set.
      CASE WHEN x.status <> 'FAIL' THEN NULL WHEN x.from_case THEN x.case_error
        ELSE (SELECT e.error FROM ${n.runs} e WHERE e.id = x.id) END AS error,
      (SELECT s.labels->>'commit' FROM ${n.sets} s WHERE s.id = x.set_id) AS "commit"
    FROM page p CROSS JOIN LATERAL (
      SELECT * FROM ((
        SELECT r.id, r.set_id, r.type, r.status, r.attempts, r.starts, r.duration_ms, r.ended_at, false AS from_case, NULL::text AS case_error
        FROM ${n.runs} r
        WHERE ${ENDED_IN_ENV} AND r.name COLLATE "C" = p.name
        ORDER BY r.ended_at DESC, r.id DESC LIMIT $4
      ) UNION ALL (
        -- The runs cases of members' results add (src/core/result-cases.ts): one attempt each, their error at hand.
        SELECT c.run_id, c.set_id, '${CASE_TEST_TYPE}', c.status, 1, 1, c.duration_ms, c.ended_at, true, c.error
        FROM ${n.cases} c
        WHERE c.env = $1 AND c.name COLLATE "C" = p.name
        ORDER BY c.ended_at DESC, c.run_id DESC LIMIT $4
      )) u ORDER BY u.ended_at DESC, u.id DESC LIMIT $4
    ) x
    ORDER BY p.name, x.ended_at DESC, x.id DESC`;
}

/** One test's runs: as members, and as cases of members' results (src/core/result-cases.ts), merged newest first. */
export function historySql(n: Names, fromCursor: boolean): string {
  return `
    SELECT u.*, s.labels FROM ((
      SELECT r.id, r.set_id, r.status, r.attempts, r.starts, r.duration_ms, r.started_at, r.ended_at, r.error
      FROM ${n.runs} r
      WHERE ${ENDED_IN_ENV} AND r.name COLLATE "C" = $2 ${fromCursor ? 'AND (r.ended_at, r.id) < ($4::timestamptz, $5)' : ''}
      ORDER BY r.ended_at DESC, r.id DESC LIMIT $3
    ) UNION ALL (
      SELECT c.run_id, c.set_id, c.status, 1, 1, c.duration_ms, r.started_at, c.ended_at, c.error
      FROM ${n.cases} c JOIN ${n.runs} r ON r.id = c.run_id
      WHERE c.env = $1 AND c.name COLLATE "C" = $2 ${fromCursor ? 'AND (c.ended_at, c.run_id) < ($4::timestamptz, $5)' : ''}
      ORDER BY c.ended_at DESC, c.run_id DESC LIMIT $3
    )) u JOIN ${n.sets} s ON s.id = u.set_id
    ORDER BY u.ended_at DESC, u.id DESC LIMIT $3`;
}

export class PostgresHistory implements TestHistoryStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly n: Names,
  ) {}

  async listTests(query: ListTestsQuery): Promise<TestsPage> {
    const after = query.cursor === undefined ? undefined : history.decodeNameCursor(query.cursor);
    // PostgreSQL text cannot hold a NUL byte, so no member's environment has one (and the query would fail).
    if (query.env.includes('\0')) return { tests: [], nextCursor: null };
    const filter = query.nameContains === undefined ? null : history.asciiLower(query.nameContains);
    if (filter?.includes('\0')) return { tests: [], nextCursor: null };
    const rows = await withClient(this.pool, async (client) => {
      const { rows } = await client.query<WindowRow<Date> & { name: string }>({
        name: `runset.history.tests.${after === undefined ? 'first' : 'cursor'}`,
        text: testsPageSql(this.n, after !== undefined),
        values: [query.env, filter, query.limit + 1, query.window, ...(after === undefined ? [] : [after])],
      });
      return rows;
    });
    const tests: TestWindow[] = [];
    for (const r of rows) {
      let test = tests[tests.length - 1];
      if (test?.name !== r.name) tests.push((test = { name: r.name, type: r.type, runs: [] }));
      test.runs.push(toWindowRun(r));
    }
    const { items, more } = history.pageOf(tests, query.limit);
    const last = items[items.length - 1];
    return { tests: items, nextCursor: more && last ? history.encodeNameCursor(last.name) : null };
  }

  async testRuns(query: TestRunsQuery): Promise<HistoryPage> {
    const at = query.cursor === undefined ? undefined : history.decodeRunCursor(query.cursor);
    if (query.env.includes('\0') || query.name.includes('\0')) return { runs: [], nextCursor: null };
    const rows = await withClient(this.pool, async (client) => {
      const values: unknown[] = [query.env, query.name, query.limit + 1];
      if (at) values.push(at.endedAt, at.id);
      const { rows } = await client.query<HistoryRow<Date>>({
        name: `runset.history.runs.${at ? 'cursor' : 'first'}`,
        text: historySql(this.n, at !== undefined),
        values,
      });
      return rows;
    });
    return history.historyPage(rows.map(toHistoryRun), query.limit);
  }
}
