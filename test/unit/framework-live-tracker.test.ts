/**
 * The live tracker of a framework share, fed plain events as runset's reporter
 * writes them: begins and ends reach the scheduler's callbacks once each, a
 * file's begin counts only where the framework cannot tell a case's start, and
 * what the stream never ended is left to the report.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { CaseResult, FrameworkTestSpec } from '../../src/core/types.js';
import { jestAdapter } from '../../src/executors/frameworks/jest.js';
import { FrameworkTracker } from '../../src/executors/frameworks/live.js';
import { guardStart } from '../../src/executors/live-tracker.js';
import { vitestAdapter } from '../../src/executors/frameworks/vitest.js';

const DIR = '/suite';

function spec(file: string, titles: string[]): FrameworkTestSpec {
  return { type: 'jest', name: titles.join(' '), tags: [], timeoutSeconds: 30, retries: 0, dir: DIR, args: [], timeoutOverride: false, retriesOverride: false, case: { entry: 'e', file, titles } };
}

function tracked(caseStarts: boolean, adapter = jestAdapter) {
  const specs = [spec('a.test.js', ['group', 'one']), spec('a.test.js', ['two']), spec('b.test.js', ['three'])];
  const begun: number[] = [];
  const ended: Array<[number, CaseResult]> = [];
  const tracker = new FrameworkTracker(specs, adapter, DIR, caseStarts, { onBegin: (i) => begun.push(i), onEnd: (i, r) => ended.push([i, r]) });
  return { tracker, begun, ended };
}

const results = (file: string, assertions: object[]) => ({ type: 'results' as const, report: { testResults: [{ name: `${DIR}/${file}`, assertionResults: assertions }] } });

test('a case begins with its own start, once; a file start is ignored where case starts are told', () => {
  const { tracker, begun } = tracked(true);
  tracker.handle({ type: 'fileBegin', file: `${DIR}/a.test.js` });
  assert.deepEqual(begun, []);
  tracker.handle({ type: 'caseBegin', file: `${DIR}/a.test.js`, titles: ['group', 'one'] });
  tracker.handle({ type: 'caseBegin', file: `${DIR}/a.test.js`, titles: ['group', 'one'] }); // a retry's start
  tracker.handle({ type: 'caseBegin', file: `${DIR}/a.test.js`, titles: ['not', 'ours'] });
  assert.deepEqual(begun, [0]);
});

test('without case starts, a file start begins every case of that file', () => {
  const { tracker, begun } = tracked(false);
  tracker.handle({ type: 'fileBegin', file: `${DIR}/a.test.js` });
  assert.deepEqual(begun, [0, 1]);
});

test("a case ends once, from its report entry read by the adapter's reader; the others are left to the report", () => {
  const { tracker, ended } = tracked(true);
  const one = { ancestorTitles: ['group'], title: 'one', status: 'failed', duration: 12, failureMessages: ['Error: boom\n    at x'], invocations: 2 };
  tracker.handle(results('a.test.js', [one]));
  tracker.handle(results('a.test.js', [{ ...one, status: 'passed', failureMessages: [] }])); // the file's end repeats it
  tracker.handle({ type: 'results', report: { nothing: 'readable' } });
  assert.equal(ended.length, 1);
  const [index, result] = ended[0]!;
  assert.equal(index, 0);
  assert.equal(result.passed, false);
  assert.equal(result.error, 'Error: boom');
  assert.equal(result.attempts, 2);
  assert.equal(result.durationMs, 12);
  assert.equal(tracker.ended(0), true);
  assert.equal(tracker.ended(1), false, 'never ended live: the report settles it');
});

test('a Vitest skip ends live as a skip, its attempts counted by the Vitest rule', () => {
  const { tracker, ended } = tracked(true, vitestAdapter);
  tracker.handle(results('b.test.js', [{ ancestorTitles: [], title: 'three', status: 'skipped', duration: null, failureMessages: [] }]));
  assert.deepEqual(ended.map(([i, r]) => [i, r.passed, r.skipped, r.attempts]), [[2, true, true, 0]]);
});

test('the start guard: silent until its first event of any kind, and a silent process is stopped', async () => {
  const specs = [spec('a.test.js', ['one'])];
  const ctx = { onBegin: () => undefined, onEnd: () => undefined };
  // An allowance already past: silence is judged at once, by the one rule of every tracker.
  const silent = new FrameworkTracker(specs, jestAdapter, DIR, true, ctx, undefined, -1);
  assert.equal(silent.silent(), true);
  const guard = guardStart(silent);
  const alive = setTimeout(() => undefined, 60_000); // the guard's poll is unref'd: a running process keeps the loop alive, here this does
  await once(guard.signal, 'abort');
  clearTimeout(alive);
  assert.equal(guard.reason, 'silent');
  guard.dispose();
  const heard = new FrameworkTracker(specs, jestAdapter, DIR, true, ctx, undefined, -1);
  heard.handle({ type: 'fileBegin', file: `${DIR}/a.test.js` });
  assert.equal(heard.silent(), false, 'any event says it started, not only ready');
  assert.equal(heard.started, true);
});
