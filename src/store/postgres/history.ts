/**
 * The PostgreSQL store's test history: every read walks the partial index
 * test_runs_history (env, name COLLATE "C", ended_at, id) INCLUDE (status,
 * attempts, duration_ms, set_id, type) WHERE ended_at IS NOT NULL (migrations
 * 13 and 14); the query plans are in bench/README.md (bench:history).
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
import type { Names } from './statements.js';

const { toWindowRun, toHistoryRun } = history.historyMappers<Date>((value) => value.toISOString());

const ENDED_IN_ENV = 'r.env = $1 AND r.ended_at IS NOT NULL';

/** The next name after `after` (SQL) among the environment's ended members. */
function nextName(n: Names, after: string | null): string {
  const past = after === null ? '' : `AND r.name COLLATE "C" > ${after}`;
  return `(SELECT min(r.name COLLATE "C") FROM ${n.runs} r WHERE ${ENDED_IN_ENV} ${past})`;
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
      CASE WHEN x.status = 'FAIL' THEN (SELECT e.error FROM ${n.runs} e WHERE e.id = x.id) END AS error,
      (SELECT s.labels->>'commit' FROM ${n.sets} s WHERE s.id = x.set_id) AS "commit"
    FROM page p CROSS JOIN LATERAL (
      SELECT r.id, r.set_id, r.type, r.status, r.attempts, r.duration_ms, r.ended_at
      FROM ${n.runs} r
      WHERE ${ENDED_IN_ENV} AND r.name COLLATE "C" = p.name
      ORDER BY r.ended_at DESC, r.id DESC LIMIT $4
    ) x
    ORDER BY p.name, x.ended_at DESC, x.id DESC`;
}

export function historySql(n: Names, fromCursor: boolean): string {
  return `
    SELECT r.id, r.set_id, s.labels, r.status, r.attempts, r.duration_ms, r.started_at, r.ended_at, r.error
    FROM ${n.runs} r JOIN ${n.sets} s ON s.id = r.set_id
    WHERE ${ENDED_IN_ENV} AND r.name COLLATE "C" = $2 ${fromCursor ? 'AND (r.ended_at, r.id) < ($4::timestamptz, $5)' : ''}
    ORDER BY r.ended_at DESC, r.id DESC LIMIT $3`;
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
