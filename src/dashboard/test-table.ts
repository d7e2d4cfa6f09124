/**
 * The Tests page's table as data: sorting by a column, and the strip of a
 * test's last outcomes. Pure (no DOM, no imports): unit-tested, bundled as is.
 */

export interface StripOutcome {
  setId: string;
  testRunId: string;
  result: string;
  flaky: boolean;
  /** Ended by a cancel: shown, but it says nothing about the test. */
  cancelled: boolean;
  endedAt: string | null;
}

export interface SortableTest {
  name: string;
  runs: number;
  /** null: no counted run. */
  passRate: number | null;
  flakyRate: number | null;
  /** Runs started again after a lost lease or worker, counted apart from flaky ones. */
  restartRate: number | null;
  durationMs: { median: number | null; p95: number | null };
  lastFailure: { endedAt: string | null } | null;
}

export const SORT_KEYS = ['name', 'runs', 'passRate', 'flakyRate', 'restartRate', 'median', 'p95', 'lastFailure'] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export type SortDir = 'asc' | 'desc';

function value(test: SortableTest, key: SortKey): string | number | null {
  switch (key) {
    case 'name':
      return test.name;
    case 'median':
    case 'p95':
      return test.durationMs[key];
    case 'lastFailure':
      return test.lastFailure?.endedAt ? Date.parse(test.lastFailure.endedAt) : null;
    default:
      return test[key];
  }
}

/** A sorted copy: what has no value (no failure, no duration yet) goes last either way; ties by name. */
export function sortTests<T extends SortableTest>(tests: readonly T[], key: SortKey, dir: SortDir): T[] {
  const sign = dir === 'asc' ? 1 : -1;
  return [...tests].sort((a, b) => {
    const va = value(a, key);
    const vb = value(b, key);
    if (va === null || vb === null) return va === vb ? a.name.localeCompare(b.name) : va === null ? 1 : -1;
    const order = typeof va === 'string' ? va.localeCompare(vb as string) : va - (vb as number);
    return order !== 0 ? sign * order : a.name.localeCompare(b.name);
  });
}

export type OutcomeKind = 'pass' | 'flaky' | 'fail' | 'cancelled';

export interface StripCell extends StripOutcome {
  kind: OutcomeKind;
}

export const STRIP_LENGTH = 30;

/** The last `length` outcomes, oldest first (the strip reads left to right, newest at the right end). */
export function outcomeStrip(newestFirst: readonly StripOutcome[], length = STRIP_LENGTH): StripCell[] {
  return newestFirst
    .slice(0, length)
    .reverse()
    .map((o) => ({ ...o, kind: kindOf(o) }));
}

/** A failure is a failure even when it is flaky (it passed on the same commit elsewhere): the flaky rate says that. */
function kindOf(o: StripOutcome): OutcomeKind {
  if (o.cancelled) return 'cancelled';
  if (o.result !== 'SUCCESS') return 'fail';
  return o.flaky ? 'flaky' : 'pass';
}

export const OUTCOME_TEXT: Record<OutcomeKind, string> = { pass: 'passed', flaky: 'passed but flaky', fail: 'failed', cancelled: 'was cancelled' };

/** The strip in words, for screen readers and as its text alternative. */
export function stripSummary(cells: readonly StripCell[]): string {
  if (cells.length === 0) return 'no runs yet';
  const n = (kind: OutcomeKind) => cells.filter((c) => c.kind === kind).length;
  const newest = cells[cells.length - 1]!.kind;
  const cancelled = n('cancelled') > 0 ? `, ${n('cancelled')} cancelled` : '';
  return `last ${cells.length} run${cells.length === 1 ? '' : 's'}: ${n('pass')} passed, ${n('flaky')} flaky, ${n('fail')} failed${cancelled}; the newest ${OUTCOME_TEXT[newest]}`;
}
