/**
 * Shapes of the test history store operations: the tests of an environment by
 * name, each with its window of latest ended runs, and one test's ended runs
 * newest first, with their cursors (the codec is ./cursor.ts). What the runs
 * mean (flaky, pass rate…) is src/history/flakiness.ts's business, not the store's.
 */
import { decodeStampCursor, encodeStampCursor } from './cursor.js';

/** A tests page's cursor, beside the runs page's below: both backends take a history page's cursors from here. */
export { decodeNameCursor, encodeNameCursor } from './cursor.js';

export interface ListTestsQuery {
  env: string;
  /** Only tests whose name contains this, ignoring the case of ASCII letters. */
  nameContains?: string;
  /** 1…100; the caller validates. */
  limit: number;
  /** Runs per test (the window), newest first. */
  window: number;
  cursor?: string;
}

/** One ended run as a test's window holds it. */
export interface WindowRun {
  setId: string;
  testRunId: string;
  result: 'SUCCESS' | 'FAIL';
  attempts: number;
  /** How many times it was started (src/core/starts.ts); a case of a member's result: 1. */
  starts: number;
  durationMs: number | null;
  endedAt: string;
  /** The error of a FAIL run; null for a SUCCESS (its error is not read). */
  error: string | null;
  /** The set's `commit` label, or null. */
  commit: string | null;
}

export interface TestWindow {
  name: string;
  /** The executor kind of its newest run. */
  type: string;
  /** Newest first (ended time, then member id). */
  runs: WindowRun[];
}

export interface TestsPage {
  /** By name (byte order of its UTF-8, on both stores). */
  tests: TestWindow[];
  nextCursor: string | null;
}

export interface TestRunsQuery {
  env: string;
  name: string;
  limit: number;
  cursor?: string;
}

export interface HistoryRun {
  setId: string;
  testRunId: string;
  labels: Record<string, string>;
  result: 'SUCCESS' | 'FAIL';
  attempts: number;
  /** How many times it was started (src/core/starts.ts); a case of a member's result: 1. */
  starts: number;
  durationMs: number | null;
  startedAt: string | null;
  endedAt: string;
  error: string | null;
}

export interface HistoryPage {
  /** Newest first: by ended time, then member id, both descending. */
  runs: HistoryRun[];
  nextCursor: string | null;
}

/** Test history: read only, over ended members (a member counts once it has ended). */
export interface TestHistoryStore {
  listTests(query: ListTestsQuery): Promise<TestsPage>;
  testRuns(query: TestRunsQuery): Promise<HistoryPage>;
}

/** A window's row as both stores read it; they differ only in how a timestamp arrives (as in ./rows.ts). */
export interface WindowRow<T> {
  id: string;
  set_id: string;
  type: string;
  status: 'SUCCESS' | 'FAIL';
  attempts: number;
  starts: number;
  duration_ms: number | null;
  ended_at: T;
  error: string | null;
  commit: string | null;
}

/** A history row: labels arrive as JSON text (SQLite) or parsed (PostgreSQL's jsonb). */
export interface HistoryRow<T> {
  id: string;
  set_id: string;
  labels: string | Record<string, string>;
  status: 'SUCCESS' | 'FAIL';
  attempts: number;
  starts: number;
  duration_ms: number | null;
  started_at: T | null;
  ended_at: T;
  error: string | null;
}

export function historyMappers<T>(stamp: (value: T) => string) {
  return {
    toWindowRun: (r: WindowRow<T>): WindowRun => ({
      setId: r.set_id,
      testRunId: r.id,
      result: r.status,
      attempts: r.attempts,
      starts: r.starts,
      durationMs: r.duration_ms,
      endedAt: stamp(r.ended_at),
      error: r.error,
      commit: r.commit,
    }),
    toHistoryRun: (r: HistoryRow<T>): HistoryRun => ({
      setId: r.set_id,
      testRunId: r.id,
      labels: typeof r.labels === 'string' ? (JSON.parse(r.labels) as Record<string, string>) : r.labels,
      result: r.status,
      attempts: r.attempts,
      starts: r.starts,
      durationMs: r.duration_ms,
      startedAt: r.started_at === null ? null : stamp(r.started_at),
      endedAt: stamp(r.ended_at),
      error: r.error,
    }),
  };
}

/** A history page from one more row than asked for: the cursor is the last run's position. */
export function historyPage(runs: readonly HistoryRun[], limit: number): HistoryPage {
  const { items, more } = pageOf(runs, limit);
  const last = items[items.length - 1];
  return { runs: items, nextCursor: more && last ? encodeRunCursor({ endedAt: last.endedAt, id: last.testRunId }) : null };
}

/** Where a history page ended: its last run's (endedAt, id). */
export interface RunPosition {
  endedAt: string;
  id: string;
}

export function encodeRunCursor(position: RunPosition): string {
  return encodeStampCursor(position.endedAt, position.id);
}

export function decodeRunCursor(cursor: string): RunPosition {
  const [endedAt, id] = decodeStampCursor(cursor);
  return { endedAt, id };
}

/** Lower-cases ASCII letters only, the same on both stores (their own lower() depends on the database's locale). */
export function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** The first `limit` items and whether more followed: stores fetch one more than a page. */
export function pageOf<T>(rows: readonly T[], limit: number): { items: T[]; more: boolean } {
  return { items: rows.slice(0, limit), more: rows.length > limit };
}

/**
 * Two lists of runs, each newest first (ended time, then member id, both
 * descending), merged in that order and cut to `limit`: a test's runs as
 * members and as cases of members' results (src/core/result-cases.ts), for a
 * store that reads them apart. Ended times are ISO strings of one length.
 */
export function mergeNewestFirst<T extends { endedAt: string; testRunId: string }>(a: readonly T[], b: readonly T[], limit: number): T[] {
  if (b.length === 0) return a.slice(0, limit);
  const newer = (x: T, y: T) => x.endedAt > y.endedAt || (x.endedAt === y.endedAt && x.testRunId > y.testRunId);
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (out.length < limit && (i < a.length || j < b.length)) {
    const x = a[i];
    const y = b[j];
    if (x !== undefined && (y === undefined || newer(x, y))) {
      out.push(x);
      i++;
    } else if (y !== undefined) {
      out.push(y);
      j++;
    }
  }
  return out;
}

/** The first of two names in byte order of their UTF-8 (both stores' name order); undefined when neither is. */
export function firstName(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Buffer.compare(Buffer.from(a), Buffer.from(b)) <= 0 ? a : b;
}

