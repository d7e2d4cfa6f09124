/**
 * What a test's recent runs say about it: pass rate, flakiness, durations, its
 * last failure. Pure (rows in, figures out): both stores hand it the same rows,
 * and its unit test hands it crafted ones. The definitions, also in docs/guides/insight.md
 * (Test history and flakiness):
 *
 * - window: a test's last HISTORY_WINDOW ended runs in one environment, newest
 *   first (ended time, then member id).
 * - cancelled: a member ended by a cancel (error `cancelled`, or `cancelled: …`
 *   from fail fast). It is shown as an outcome, but left out of `runs`, every
 *   rate, the durations and `lastFailure`: a cancel says nothing about the test.
 * - flaky: a run that passed only after a retry (SUCCESS with attempts > 1); or
 *   a FAIL on a commit on which another counted run of the test in the window
 *   passed, and that passing run too (the pair: the same code both passed and
 *   failed). The commit is the set's `commit` label; runs without one are judged
 *   by retries alone.
 * - restarted: a run started more than once because a start of it was lost (its
 *   lease expired while it ran, or its worker gave it back: wasRestarted,
 *   src/core/starts.ts). runset runs a member at least once, so its test ran
 *   again; that says something of the workers, not of the test: it is counted
 *   apart (restartRate), and a restart alone never makes a run flaky (a retry
 *   within its last start still does).
 */
import { CANCELLED } from '../sets/cancel.js';
import { passedAfterRetry } from '../core/states.js';
import { wasRestarted } from '../core/starts.js';
import { median } from '../core/expected.js';
import type { WindowRun } from '../store/history.js';

export type { WindowRun };

/** How many ended runs per test the tests list judges (and shows as lastOutcomes). */
export const HISTORY_WINDOW = 50;

export interface Outcome {
  setId: string;
  testRunId: string;
  result: 'SUCCESS' | 'FAIL';
  flaky: boolean;
  /** Started more than once because a start was lost (not flaky by itself). */
  restarted: boolean;
  cancelled: boolean;
  endedAt: string;
}

export interface TestFigures {
  lastOutcomes: Outcome[];
  runs: number;
  passRate: number | null;
  flakyRate: number | null;
  /** Restarted runs / runs: how often a lost lease or worker made the test run again. */
  restartRate: number | null;
  durationMs: { median: number | null; p95: number | null };
  lastFailure: { setId: string; testRunId: string; endedAt: string; error: string | null } | null;
}

export function isCancelled(error: string | null): boolean {
  return error !== null && (error === CANCELLED || error.startsWith(`${CANCELLED}: `));
}

/** The first line of an error: what a list has room for (the member's page has the rest). */
export function firstLine(error: string | null): string | null {
  if (error === null) return null;
  const end = error.indexOf('\n');
  return end < 0 ? error : error.slice(0, end).replace(/\r$/, '');
}

/** Which runs of a window are flaky (same order as given). Cancelled runs never are, and never pair. */
export function flakyRuns(runs: readonly WindowRun[]): boolean[] {
  const counted = (r: WindowRun) => !isCancelled(r.error);
  const passedOn = new Set<string>();
  const failedOn = new Set<string>();
  for (const r of runs) {
    if (!counted(r) || r.commit === null) continue;
    (r.result === 'SUCCESS' ? passedOn : failedOn).add(r.commit);
  }
  return runs.map((r) => {
    if (!counted(r)) return false;
    if (passedAfterRetry(r.result, r.attempts)) return true;
    if (r.commit === null) return false;
    return r.result === 'FAIL' ? passedOn.has(r.commit) : failedOn.has(r.commit);
  });
}

/** Nearest-rank percentile (p in 0…1) of ascending values. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length))) - 1] ?? null;
}

/** A rate over the counted runs, to 4 decimals; null when nothing was counted. */
function rate(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000;
}

/** The figures of one test from its window, newest first. */
export function summarize(window: readonly WindowRun[]): TestFigures {
  const flaky = flakyRuns(window);
  const lastOutcomes = window.map((r, i) => ({
    setId: r.setId,
    testRunId: r.testRunId,
    result: r.result,
    flaky: flaky[i] === true,
    restarted: wasRestarted(r),
    cancelled: isCancelled(r.error),
    endedAt: r.endedAt,
  }));
  const counted = window.filter((r) => !isCancelled(r.error));
  const passed = counted.filter((r) => r.result === 'SUCCESS').length;
  const durations = counted.flatMap((r) => (r.durationMs === null ? [] : [r.durationMs])).sort((a, b) => a - b);
  const failure = counted.find((r) => r.result === 'FAIL');
  return {
    lastOutcomes,
    runs: counted.length,
    passRate: rate(passed, counted.length),
    flakyRate: rate(flaky.filter(Boolean).length, counted.length),
    restartRate: rate(counted.filter((r) => wasRestarted(r)).length, counted.length),
    durationMs: { median: median(durations) ?? null, p95: percentile(durations, 0.95) },
    lastFailure: failure ? { setId: failure.setId, testRunId: failure.testRunId, endedAt: failure.endedAt, error: firstLine(failure.error) } : null,
  };
}
