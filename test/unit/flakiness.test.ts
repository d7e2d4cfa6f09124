import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstLine, flakyRuns, isCancelled, percentile, summarize, type WindowRun } from '../../src/history/flakiness.js';

let n = 0;
/** A crafted run, newest first by the order the test lists them. */
function run(result: 'SUCCESS' | 'FAIL', more: Partial<WindowRun> = {}): WindowRun {
  n += 1;
  return {
    setId: `set-${n}`,
    testRunId: `run-${n}`,
    result,
    attempts: 1,
    starts: 1,
    durationMs: 100,
    endedAt: new Date(Date.UTC(2030, 0, 1) - n * 60_000).toISOString(),
    error: result === 'FAIL' ? 'expected 200, got 500' : null,
    commit: null,
    ...more,
  };
}

test('flaky by retry: a pass after a retry; a first-try pass and a failure after retries are not', () => {
  assert.deepEqual(flakyRuns([run('SUCCESS', { attempts: 2 }), run('SUCCESS'), run('FAIL', { attempts: 3 })]), [true, false, false]);
});

test('flaky by commit: a failure and a pass of the same commit are both flaky; other commits and unlabelled runs are not', () => {
  const runs = [
    run('FAIL', { commit: 'a1' }),
    run('SUCCESS', { commit: 'a1' }),
    run('SUCCESS', { commit: 'a1' }),
    run('FAIL', { commit: 'b2' }),
    run('SUCCESS', { commit: 'c3' }),
    run('FAIL'),
    run('SUCCESS'),
  ];
  assert.deepEqual(flakyRuns(runs), [true, true, true, false, false, false, false]);
});

test('a rerun after a lost lease is counted apart from a retry: restarted, not flaky, in the restart rate and not the flaky rate', () => {
  const runs = [
    run('SUCCESS', { starts: 2 }), // passed on its second start, after its first was lost
    run('SUCCESS', { attempts: 2 }), // passed on retry within one start: flaky
    run('SUCCESS', { starts: 3, attempts: 2 }), // restarted, and retried in its last start: both
    run('FAIL', { starts: 2, error: 'cancelled' }), // cancelled: counted nowhere
    run('SUCCESS'),
  ];
  const figures = summarize(runs);
  assert.deepEqual(figures.lastOutcomes.map((o) => [o.flaky, o.restarted]), [[false, true], [true, false], [true, true], [false, true], [false, false]]);
  assert.equal(figures.runs, 4);
  assert.equal(figures.flakyRate, 0.5);
  assert.equal(figures.restartRate, 0.5);
});

test('cancelled runs are shown, never flaky, never pair, and counted nowhere', () => {
  const runs = [
    run('FAIL', { commit: 'a1', error: 'cancelled', durationMs: null }),
    run('FAIL', { commit: 'a1', error: 'cancelled: maxFailures 3 reached', durationMs: 5 }),
    run('SUCCESS', { commit: 'a1', durationMs: 300 }),
    run('FAIL', { commit: 'z9', error: 'cancelled because of a typo' }),
  ];
  const figures = summarize(runs);
  assert.deepEqual(figures.lastOutcomes.map((o) => [o.result, o.cancelled, o.flaky]), [
    ['FAIL', true, false],
    ['FAIL', true, false],
    ['SUCCESS', false, false],
    ['FAIL', false, false],
  ]);
  assert.equal(figures.runs, 2, 'the two cancelled runs are left out');
  assert.equal(figures.passRate, 0.5);
  assert.equal(figures.flakyRate, 0);
  assert.deepEqual(figures.durationMs, { median: 200, p95: 300 });
  assert.equal(figures.lastFailure?.testRunId, runs[3]!.testRunId, 'a cancel is not the last failure');
  assert.equal(isCancelled('cancelled'), true);
  assert.equal(isCancelled('cancelledx'), false);
});

test('summary: pass rate, flaky rate, durations and the newest failure, first line only', () => {
  const runs = [
    run('FAIL', { error: 'Timeout 30000ms exceeded\n    at page.click', durationMs: 900 }),
    run('SUCCESS', { attempts: 2, durationMs: 400 }),
    run('FAIL', { error: 'older failure', durationMs: 300 }),
    run('SUCCESS', { durationMs: 200 }),
  ];
  const figures = summarize(runs);
  assert.equal(figures.runs, 4);
  assert.equal(figures.passRate, 0.5);
  assert.equal(figures.flakyRate, 0.25);
  assert.deepEqual(figures.durationMs, { median: 350, p95: 900 });
  assert.deepEqual(figures.lastFailure, { setId: runs[0]!.setId, testRunId: runs[0]!.testRunId, endedAt: runs[0]!.endedAt, error: 'Timeout 30000ms exceeded' });
  assert.deepEqual(figures.lastOutcomes.map((o) => o.testRunId), runs.map((r) => r.testRunId), 'newest first, as given');
});

test('a newly failing test: its newest run failed, after passes on other commits; not flaky', () => {
  const runs = [run('FAIL', { commit: 'new' }), ...[1, 2, 3].map((i) => run('SUCCESS', { commit: `old${i}` }))];
  const figures = summarize(runs);
  assert.equal(figures.lastOutcomes[0]?.result, 'FAIL');
  assert.equal(figures.flakyRate, 0);
  assert.equal(figures.passRate, 0.75);
  assert.equal(figures.lastFailure?.testRunId, runs[0]!.testRunId);
});

test('no counted runs: rates and durations are null; a failure of no error has a null error', () => {
  assert.deepEqual(summarize([]), { lastOutcomes: [], runs: 0, passRate: null, flakyRate: null, restartRate: null, durationMs: { median: null, p95: null }, lastFailure: null });
  assert.equal(summarize([run('FAIL', { error: null })]).lastFailure?.error, null);
  assert.equal(summarize([run('SUCCESS', { durationMs: null })]).durationMs.median, null);
});

test('percentile is nearest-rank; firstLine cuts at the first line break', () => {
  const values = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(percentile(values, 0.95), 95);
  assert.equal(percentile([7], 0.95), 7);
  assert.equal(percentile([], 0.95), null);
  assert.equal(firstLine('one\r\ntwo'), 'one');
  assert.equal(firstLine('only'), 'only');
  assert.equal(firstLine(null), null);
});
