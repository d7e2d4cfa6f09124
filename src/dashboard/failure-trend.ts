/**
 * Is a failure new, or does this test fail often? The set page marks each
 * failed test from its history in the environment (GET /api/v0/tests/history,
 * newest first). Pure (no DOM, no imports): unit-tested, bundled as is.
 *
 * The rule, over the failed run and the runs of the same test before it:
 *  - only ended runs count, and not cancelled ones: a cancel says nothing
 *    about the test (and a cancelled member gets no mark);
 *  - **fails often**: it failed in at least OFTEN (3) of its last WINDOW (10)
 *    runs, this one included — whatever the previous run did, a test that
 *    flaps is not "new";
 *  - **newly failing**: otherwise, when the run before it passed (a pass after
 *    a retry counts as a pass);
 *  - **failing again**: otherwise (the run before it failed too, but it has
 *    not failed OFTEN times in WINDOW);
 *  - **first run**: no earlier run is known.
 */

export const WINDOW = 10;
export const OFTEN = 3;

export type FailureTrend = 'fails-often' | 'newly-failing' | 'failing-again' | 'first-run';

export interface HistoryRun {
  testRunId: string;
  result: string;
  endedAt: string | null;
  cancelled: boolean;
}

export interface TrendVerdict {
  trend: FailureTrend;
  /** Failures among the runs considered (at most WINDOW, this one included). */
  failures: number;
  /** Runs considered. */
  runs: number;
}

/** Whether a member's error says a cancel ended it: the words of src/sets/cancel.ts, alone or with a reason. */
export function cancelledBy(error: string | null): boolean {
  return error === 'cancelled' || (error ?? '').startsWith('cancelled: ');
}

function counts(run: HistoryRun): boolean {
  return (run.result === 'SUCCESS' || run.result === 'FAIL') && !run.cancelled;
}

/**
 * `history` may hold runs after this one (a later set): only those that
 * ended before `failed` ended are earlier. `failed` itself need not be in it.
 */
export function failureTrend(failed: HistoryRun, history: readonly HistoryRun[]): TrendVerdict {
  const endedAt = failed.endedAt === null ? Infinity : Date.parse(failed.endedAt);
  const earlier = history
    .filter((run) => run.testRunId !== failed.testRunId && counts(run) && run.endedAt !== null && Date.parse(run.endedAt) < endedAt)
    .sort((a, b) => Date.parse(b.endedAt!) - Date.parse(a.endedAt!))
    .slice(0, WINDOW - 1);
  const failures = 1 + earlier.filter((run) => run.result === 'FAIL').length;
  const verdict = { failures, runs: 1 + earlier.length };
  if (failures >= OFTEN) return { trend: 'fails-often', ...verdict };
  if (earlier.length === 0) return { trend: 'first-run', ...verdict };
  return { trend: earlier[0]!.result === 'SUCCESS' ? 'newly-failing' : 'failing-again', ...verdict };
}

/** How the page words each trend: the mark's text, never its colour alone. */
export const TREND_TEXT: Record<FailureTrend, string> = {
  'fails-often': 'fails often',
  'newly-failing': 'newly failing',
  'failing-again': 'failed before too',
  'first-run': 'first run',
};
