/**
 * The SQLite store's test history: every read walks the partial index
 * test_runs_history (env, name, ended_at, id, status, attempts, duration_ms,
 * set_id, type) WHERE ended_at IS NOT NULL (migrations 12 and 13); the query
 * plans are in bench/README.md (bench:history).
 *
 * The tests list finds an environment's distinct test names one index seek at
 * a time (the next name after the last one), which costs a few microseconds per
 * name in-process, instead of a DISTINCT that reads every ended member.
 */
import type Database from 'better-sqlite3';
import * as history from '../history.js';
import type { HistoryPage, HistoryRow, ListTestsQuery, TestHistoryStore, TestRunsQuery, TestsPage, TestWindow, WindowRow } from '../history.js';
import { settle } from './settle.js';

const { toWindowRun, toHistoryRun } = history.historyMappers<string>((value) => value);

const ENDED = 'r.env = @env AND r.name = @name AND r.ended_at IS NOT NULL';
const NEWEST_FIRST = 'ORDER BY r.ended_at DESC, r.id DESC LIMIT @limit';
const NAMES = 'SELECT name FROM test_runs WHERE env = @env AND ended_at IS NOT NULL';
const RUNS = `
  SELECT r.id, r.set_id, s.labels, r.status, r.attempts, r.duration_ms, r.started_at, r.ended_at, r.error
  FROM test_runs r JOIN test_run_sets s ON s.id = r.set_id
  WHERE ${ENDED}`;

/** Each read, by name: exported so that bench:history shows the plan of exactly what runs. */
export const HISTORY_SQL = Object.freeze({
  firstName: `${NAMES} ORDER BY name LIMIT 1`,
  nextName: `${NAMES} AND name > @after ORDER BY name LIMIT 1`,
  // Covered by the index but for the error, looked up (by rowid) for failures alone.
  window: `
    SELECT r.id, r.set_id, r.type, r.status, r.attempts, r.duration_ms, r.ended_at, e.error,
      json_extract(s.labels, '$.commit') AS "commit"
    FROM test_runs r JOIN test_run_sets s ON s.id = r.set_id
      LEFT JOIN test_runs e ON r.status = 'FAIL' AND e.rowid = r.rowid
    WHERE ${ENDED} ${NEWEST_FIRST}`,
  newest: `${RUNS} ${NEWEST_FIRST}`,
  older: `${RUNS} AND (r.ended_at, r.id) < (@ended_at, @id) ${NEWEST_FIRST}`,
});

export class SqliteHistory implements TestHistoryStore {
  private readonly firstName: Database.Statement;
  private readonly nextName: Database.Statement;
  private readonly window: Database.Statement;
  private readonly newest: Database.Statement;
  private readonly older: Database.Statement;

  constructor(db: Database.Database) {
    this.firstName = db.prepare(HISTORY_SQL.firstName).pluck();
    this.nextName = db.prepare(HISTORY_SQL.nextName).pluck();
    this.window = db.prepare(HISTORY_SQL.window);
    this.newest = db.prepare(HISTORY_SQL.newest);
    this.older = db.prepare(HISTORY_SQL.older);
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
      const rows = (query.cursor === undefined
        ? this.newest.all(params)
        : this.older.all({ ...params, ...positionParams(query.cursor) })) as HistoryRow<string>[];
      return history.historyPage(rows.map(toHistoryRun), query.limit);
    });
  }

  /** Up to limit + 1 names after the cursor that pass the filter, in order. */
  private names(query: ListTestsQuery): string[] {
    const wanted = query.nameContains === undefined ? undefined : history.asciiLower(query.nameContains);
    const found: string[] = [];
    let name = (query.cursor === undefined
      ? this.firstName.get({ env: query.env })
      : this.nextName.get({ env: query.env, after: history.decodeNameCursor(query.cursor) })) as string | undefined;
    while (name !== undefined && found.length <= query.limit) {
      if (wanted === undefined || history.asciiLower(name).includes(wanted)) found.push(name);
      name = this.nextName.get({ env: query.env, after: name }) as string | undefined;
    }
    return found;
  }

  private windowOf(env: string, name: string, window: number): TestWindow {
    const rows = this.window.all({ env, name, limit: window }) as WindowRow<string>[];
    return { name, type: rows[0]?.type ?? '', runs: rows.map(toWindowRun) };
  }
}

function positionParams(cursor: string): { ended_at: string; id: string } {
  const at = history.decodeRunCursor(cursor);
  return { ended_at: at.endedAt, id: at.id };
}
