/**
 * The SQLite store's test history: every read walks the partial index
 * test_runs_history (env, name, ended_at, id, status, attempts, duration_ms,
 * set_id, type, starts) WHERE ended_at IS NOT NULL (migrations 13, 14 and 29); the query
 * plans are in bench/README.md (bench:history).
 *
 * The tests list finds an environment's distinct test names one index seek at
 * a time (the next name after the last one), which costs a few microseconds per
 * name in-process, instead of a DISTINCT that reads every ended member.
 */
import type Database from 'better-sqlite3';
import * as history from '../history.js';
import type { HistoryPage, HistoryRow, ListTestsQuery, TestHistoryStore, TestRunsQuery, TestsPage, TestWindow, WindowRow, WindowRun } from '../history.js';
import { CASE_TEST_TYPE } from '../../core/result-cases.js';

type Statement = Database.Statement;
import { settle } from './settle.js';

const { toWindowRun, toHistoryRun } = history.historyMappers<string>((value) => value);

const ENDED = 'r.env = @env AND r.name = @name AND r.ended_at IS NOT NULL';
const NEWEST_FIRST = 'ORDER BY r.ended_at DESC, r.id DESC LIMIT @limit';
const NAMES = 'SELECT name FROM test_runs WHERE env = @env AND ended_at IS NOT NULL';
const RUNS = `
  SELECT r.id, r.set_id, s.labels, r.status, r.attempts, r.starts, r.duration_ms, r.started_at, r.ended_at, r.error
  FROM test_runs r JOIN test_run_sets s ON s.id = r.set_id
  WHERE ${ENDED}`;

const CASE_ENDED = 'c.env = @env AND c.name = @name';
const CASES_NEWEST_FIRST = 'ORDER BY c.ended_at DESC, c.run_id DESC LIMIT @limit';
const CASE_NAMES = 'SELECT name FROM test_run_cases WHERE env = @env';
const CASE_RUNS = `
  SELECT c.run_id AS id, c.set_id, s.labels, c.status, 1 AS attempts, 1 AS starts, c.duration_ms, r.started_at, c.ended_at, c.error
  FROM test_run_cases c JOIN test_run_sets s ON s.id = c.set_id JOIN test_runs r ON r.id = c.run_id
  WHERE ${CASE_ENDED}`;

/** Each read, by name: exported so that bench:history shows the plan of exactly what runs. */
export const HISTORY_SQL = Object.freeze({
  firstName: `${NAMES} ORDER BY name LIMIT 1`,
  nextName: `${NAMES} AND name > @after ORDER BY name LIMIT 1`,
  // Covered by the index but for the error, looked up (by rowid) for failures alone.
  window: `
    SELECT r.id, r.set_id, r.type, r.status, r.attempts, r.starts, r.duration_ms, r.ended_at, e.error,
      json_extract(s.labels, '$.commit') AS "commit"
    FROM test_runs r JOIN test_run_sets s ON s.id = r.set_id
      LEFT JOIN test_runs e ON r.status = 'FAIL' AND e.rowid = r.rowid
    WHERE ${ENDED} ${NEWEST_FIRST}`,
  newest: `${RUNS} ${NEWEST_FIRST}`,
  older: `${RUNS} AND (r.ended_at, r.id) < (@ended_at, @id) ${NEWEST_FIRST}`,
  // The same reads over the runs that cases of members' results add (src/core/result-cases.ts),
  // on the index test_run_cases_history (env, name, ended_at, run_id); merged with the members' in TypeScript.
  caseFirstName: `${CASE_NAMES} ORDER BY name LIMIT 1`,
  caseNextName: `${CASE_NAMES} AND name > @after ORDER BY name LIMIT 1`,
  caseWindow: `
    SELECT c.run_id AS id, c.set_id, '${CASE_TEST_TYPE}' AS type, c.status, 1 AS attempts, 1 AS starts, c.duration_ms, c.ended_at, c.error,
      json_extract(s.labels, '$.commit') AS "commit"
    FROM test_run_cases c JOIN test_run_sets s ON s.id = c.set_id
    WHERE ${CASE_ENDED} ${CASES_NEWEST_FIRST}`,
  caseNewest: `${CASE_RUNS} ${CASES_NEWEST_FIRST}`,
  caseOlder: `${CASE_RUNS} AND (c.ended_at, c.run_id) < (@ended_at, @id) ${CASES_NEWEST_FIRST}`,
});

type Read = keyof typeof HISTORY_SQL;
const PLUCKED: ReadonlySet<Read> = new Set(['firstName', 'nextName', 'caseFirstName', 'caseNextName']);

export class SqliteHistory implements TestHistoryStore {
  private readonly sql: Record<Read, Database.Statement>;

  constructor(db: Database.Database) {
    const entries = Object.entries(HISTORY_SQL).map(([read, text]) => [read, PLUCKED.has(read as Read) ? db.prepare(text).pluck() : db.prepare(text)]);
    this.sql = Object.fromEntries(entries) as Record<Read, Database.Statement>;
  }

  listTests(query: ListTestsQuery): Promise<TestsPage> {
    return settle(() => {
      const names = this.names(query);
      const { items, more } = history.pageOf(names, query.limit);
      const tests = items.map((name) => this.windowOf(query.env, name, query.window));
      const last = items[items.length - 1];
      return { tests, nextCursor: more && last !== undefined ? history.encodeNameCursor(last) : null };
    });
  }

  testRuns(query: TestRunsQuery): Promise<HistoryPage> {
    return settle(() => {
      const params = { env: query.env, name: query.name, limit: query.limit + 1 };
      const read = (newest: Statement, older: Statement) =>
        ((query.cursor === undefined ? newest.all(params) : older.all({ ...params, ...positionParams(query.cursor) })) as HistoryRow<string>[]).map(toHistoryRun);
      const runs = history.mergeNewestFirst(read(this.sql.newest, this.sql.older), read(this.sql.caseNewest, this.sql.caseOlder), query.limit + 1);
      return history.historyPage(runs, query.limit);
    });
  }

  /** Up to limit + 1 names after the cursor that pass the filter, in order. */
  private names(query: ListTestsQuery): string[] {
    const wanted = query.nameContains === undefined ? undefined : history.asciiLower(query.nameContains);
    const found: string[] = [];
    let name = query.cursor === undefined ? this.first(query.env) : this.next(query.env, history.decodeNameCursor(query.cursor));
    while (name !== undefined && found.length <= query.limit) {
      if (wanted === undefined || history.asciiLower(name).includes(wanted)) found.push(name);
      name = this.next(query.env, name);
    }
    return found;
  }

  /** The environment's first test name, of a member or of a case. */
  private first(env: string): string | undefined {
    return history.firstName(this.sql.firstName.get({ env }) as string | undefined, this.sql.caseFirstName.get({ env }) as string | undefined);
  }

  private next(env: string, after: string): string | undefined {
    const params = { env, after };
    return history.firstName(this.sql.nextName.get(params) as string | undefined, this.sql.caseNextName.get(params) as string | undefined);
  }

  private windowOf(env: string, name: string, window: number): TestWindow {
    const params = { env, name, limit: window };
    const members = this.sql.window.all(params) as WindowRow<string>[];
    const cases = this.sql.caseWindow.all(params) as WindowRow<string>[];
    const newest = history.mergeNewestFirst(members.map(withType), cases.map(withType), window);
    return { name, type: newest[0]?.type ?? '', runs: newest.map((r) => r.run) };
  }
}

/** A window run with its executor kind (the newest one's names the test's type). */
function withType(row: WindowRow<string>): { endedAt: string; testRunId: string; type: string; run: WindowRun } {
  const run = toWindowRun(row);
  return { endedAt: run.endedAt, testRunId: run.testRunId, type: row.type, run };
}

function positionParams(cursor: string): { ended_at: string; id: string } {
  const at = history.decodeRunCursor(cursor);
  return { ended_at: at.endedAt, id: at.id };
}
