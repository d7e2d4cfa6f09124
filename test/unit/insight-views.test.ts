/** The insight views as data: chart scales and ticks, the Tests table's sorting and outcome strip, an environment's pass rate per day. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linearScale, niceTicks } from '../../src/dashboard/chart-scale.js';
import { outcomeStrip, sortTests, stripSummary, type SortableTest } from '../../src/dashboard/test-table.js';
import { passRateByDay, percent } from '../../src/dashboard/env-trend.js';

test('ticks are round steps from 0 to the first at or above the maximum', () => {
  assert.deepEqual(niceTicks(10), [0, 5, 10]);
  assert.deepEqual(niceTicks(7), [0, 2, 4, 6, 8]);
  assert.deepEqual(niceTicks(1234), [0, 500, 1000, 1500]);
  assert.deepEqual(niceTicks(0.3), [0, 0.1, 0.2, 0.3]);
  assert.deepEqual(niceTicks(0), [0, 1]);
});

test('a linear scale maps the domain onto the range, a one-value domain to its middle', () => {
  const y = linearScale(0, 100, 200, 0);
  assert.equal(y(0), 200);
  assert.equal(y(25), 150);
  assert.equal(linearScale(5, 5, 0, 10)(5), 5);
});

const t = (name: string, passRate: number | null, median: number | null, failedAt: string | null = null): SortableTest => ({
  name,
  runs: 10,
  passRate,
  flakyRate: 0,
  restartRate: 0,
  durationMs: { median, p95: median },
  lastFailure: failedAt ? { endedAt: failedAt } : null,
});

test('tests sort by a column either way; no value goes last both ways; ties by name', () => {
  const tests = [t('b', 0.5, 200), t('a', null, null), t('c', 0.5, 100, '2026-11-25T10:00:00Z'), t('d', 1, 300, '2026-11-24T10:00:00Z')];
  const names = (key: Parameters<typeof sortTests>[1], dir: 'asc' | 'desc') => sortTests(tests, key, dir).map((x) => x.name).join('');
  assert.equal(names('name', 'asc'), 'abcd');
  assert.equal(names('name', 'desc'), 'dcba');
  assert.equal(names('passRate', 'asc'), 'bcda');
  assert.equal(names('passRate', 'desc'), 'dbca');
  assert.equal(names('median', 'asc'), 'cbda');
  assert.equal(names('median', 'desc'), 'dbca');
  assert.equal(names('lastFailure', 'desc'), 'cdab');
  assert.equal(tests[0]!.name, 'b', 'the input is left as it was');
});

test('the strip is the last 30 outcomes, oldest first, each a pass, a flaky pass, a failure or a cancel', () => {
  const outcomes = Array.from({ length: 50 }, (_, i) => ({
    setId: `s${i}`,
    testRunId: `r${i}`,
    result: i === 0 || i === 29 ? 'FAIL' : 'SUCCESS',
    flaky: i === 1,
    cancelled: i === 2,
    endedAt: null,
  }));
  const strip = outcomeStrip(outcomes);
  assert.equal(strip.length, 30);
  assert.deepEqual([strip[0]!.testRunId, strip[29]!.testRunId], ['r29', 'r0']);
  assert.deepEqual([strip[0]!.kind, strip[27]!.kind, strip[28]!.kind, strip[29]!.kind, strip[1]!.kind], ['fail', 'cancelled', 'flaky', 'fail', 'pass']);
  assert.equal(stripSummary(strip), 'last 30 runs: 26 passed, 1 flaky, 2 failed, 1 cancelled; the newest failed');
  assert.equal(stripSummary([]), 'no runs yet');
});

test('pass rate per day: ended sets and their tests, oldest day first', () => {
  const set = (status: string, createdAt: string, pass: number, fail: number) => ({ status, createdAt, progress: { counts: { SUCCESS: pass, FAIL: fail } } });
  const days = passRateByDay(
    [
      set('SUCCESS', '2026-11-25T09:00:00Z', 3, 0),
      set('FAIL', '2026-11-25T08:00:00Z', 2, 1),
      set('RUNNING', '2026-11-25T10:00:00Z', 1, 0),
      set('SUCCESS', '2026-11-23T08:00:00Z', 3, 0),
    ],
    (iso) => iso.slice(0, 10),
  );
  assert.deepEqual(days, [
    { day: '2026-11-23', sets: 1, setsPassed: 1, tests: 3, testsPassed: 3 },
    { day: '2026-11-25', sets: 2, setsPassed: 1, tests: 6, testsPassed: 5 },
  ]);
  assert.equal(percent(5, 6), 83);
  assert.equal(percent(0, 0), null);
});
