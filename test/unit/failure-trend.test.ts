/** Newly failing, failing again, fails often: a failed run judged against the runs of its test before it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cancelledBy, failureTrend, OFTEN, WINDOW, type HistoryRun } from '../../src/dashboard/failure-trend.js';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');
let next = 0;
/** One run ending `minutesAgo` before T0. */
const run = (result: string, minutesAgo: number, cancelled = false): HistoryRun => ({
  testRunId: `run-${next++}`,
  result,
  endedAt: new Date(T0 - minutesAgo * 60_000).toISOString(),
  cancelled,
});
/** Runs newest first, one a minute before the failed one, from a string such as "PPF" (P pass, F fail). */
const before = (pattern: string) => [...pattern].map((c, i) => run(c === 'F' ? 'FAIL' : 'SUCCESS', i + 1));
const failed = run('FAIL', 0);

test('the rule says 3 of 10', () => {
  assert.equal(WINDOW, 10);
  assert.equal(OFTEN, 3);
});

test('newly failing: the run before passed, and it has failed fewer than 3 times in 10', () => {
  assert.deepEqual(failureTrend(failed, before('PPPPP')), { trend: 'newly-failing', failures: 1, runs: 6 });
  assert.equal(failureTrend(failed, before('PFPPP')).trend, 'newly-failing');
});

test('fails often: 3 or more failures in its last 10 runs, whatever the run before did', () => {
  assert.deepEqual(failureTrend(failed, before('PFPFPPPP')), { trend: 'fails-often', failures: 3, runs: 9 });
  assert.equal(failureTrend(failed, before('FF')).trend, 'fails-often');
  // Failures older than the last 10 runs no longer count.
  assert.deepEqual(failureTrend(failed, before('PPPPPPPPPFF')), { trend: 'newly-failing', failures: 1, runs: 10 });
});

test('failing again: the run before failed too, under 3 in 10', () => {
  assert.equal(failureTrend(failed, before('FPPP')).trend, 'failing-again');
});

test('first run: nothing known before it', () => {
  assert.deepEqual(failureTrend(failed, []), { trend: 'first-run', failures: 1, runs: 1 });
});

test('later runs, the run itself, unfinished and cancelled runs are left out; order does not matter', () => {
  const later = [run('FAIL', -5), run('FAIL', -3)];
  const cancelled = run('FAIL', 1, true);
  const running = { ...run('RUNNING', 2), endedAt: null };
  const history = [...later, failed, cancelled, running, ...before('PPP').reverse()];
  assert.deepEqual(failureTrend(failed, history), { trend: 'newly-failing', failures: 1, runs: 4 });
});

test("a member's error says whether a cancel ended it", () => {
  assert.equal(cancelledBy('cancelled'), true);
  assert.equal(cancelledBy('cancelled: maxFailures 2 reached'), true);
  assert.equal(cancelledBy('cancelled by the user in the app'), false);
  assert.equal(cancelledBy(null), false);
});
