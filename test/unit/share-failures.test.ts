/**
 * The failures every listed entry's executor shares (src/executors/share.ts):
 * a share that cannot start, and one whose process said nothing within its
 * start allowance, worded once for Playwright and every framework.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CaseResult } from '../../src/core/types.js';
import { failAll, failSilentStart } from '../../src/executors/share.js';

function ends(run: (ctx: { onEnd: (i: number, r: CaseResult) => void }) => void): Array<[number, CaseResult]> {
  const ended: Array<[number, CaseResult]> = [];
  run({ onEnd: (i, r) => ended.push([i, r]) });
  return ended;
}

test('a share that cannot start ends every member, none having run, with its first error lines', () => {
  const ended = ends((ctx) => failAll(['a', 'b'], ctx, 'cannot start it', 'banner\nError: no such file\n    at x (y.js:1:1)\n'));
  assert.deepEqual(ended.map(([i]) => i), [0, 1]);
  for (const [, r] of ended) {
    assert.equal(r.passed, false);
    assert.equal(r.error, 'cannot start it: Error: no such file');
    assert.equal(r.attempts, 0);
    assert.match(r.output, /banner/, 'what it printed is kept');
  }
});

test('a silent start names the runner and its allowance, then its own words, and ends pointing to runset check', () => {
  const [[, r]] = ends((ctx) => failSilentStart(['a'], ctx, 'Playwright 1.49.1', 60_000, 'Error: config waits on stdin\n')) as [[number, CaseResult]];
  assert.equal(
    r.error,
    "Playwright 1.49.1 said nothing for 60s after it started (runset's reporter never loaded): it was stuck before its first test, and was stopped: " +
      'Error: config waits on stdin; `runset check` shows whether its config loads',
  );
  const [[, quiet]] = ends((ctx) => failSilentStart(['a'], ctx, 'Vitest 3.2.4', 1000, '')) as [[number, CaseResult]];
  assert.match(quiet.error ?? '', /^Vitest 3\.2\.4 said nothing for 1s .*and was stopped; `runset check` shows whether its config loads$/);
});
