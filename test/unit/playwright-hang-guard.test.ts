/**
 * runset's hang guard (tracker.ts): a test is hung only when nothing came from
 * it or its worker for QUIET_MS and it is past its own timeout, as it stands,
 * and its teardown. Plain events and a fake clock: no Playwright needed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CaseResult } from '../../src/core/types.js';
import { BatchTracker, guardLimitMs, QUIET_MS } from '../../src/executors/playwright/tracker.js';
import { caseKey } from '../../src/executors/listed-case.js';
import { caseSpec } from '../store/batch-contract.js';

/** Members of project `app` titled `titles`; `key` also names tests outside the batch (a setup project's). */
function harness(titles: string[]) {
  const ended = new Map<number, CaseResult>();
  let now = 1_000;
  const tracker = new BatchTracker(titles.map((t) => caseSpec(t, 'e2e', 'app')), { onBegin: () => undefined, onEnd: (i, r) => ended.set(i, r) }, () => now);
  const key = (t: string, project = 'app') => caseKey({ project, file: 'a.spec.ts', titles: [t] });
  const begin = (t: string, lane: number, timeoutMs = 1000) => tracker.handle({ type: 'testBegin', key: key(t), retry: 0, timeoutMs, lane, id: `id-${t}` });
  return { tracker, ended, key, begin, advance: (ms: number) => (now += ms) };
}

test('a silent test past its timeout and teardown is hung; the error names the guard, not timeoutSeconds; the rest run again', () => {
  const h = harness(['hangs', 'bystander', 'later']);
  h.tracker.handle({ type: 'begin', keys: [h.key('hangs'), h.key('bystander'), h.key('later')], setupProjects: [] });
  h.begin('hangs', 0);
  h.tracker.handle({ type: 'output', key: h.key('hangs'), text: 'spinning now\n' });
  h.begin('bystander', 1);
  h.advance(guardLimitMs(1000));
  h.tracker.handle({ type: 'pulse', lane: 1, testId: 'id-bystander', timeoutMs: 1000 });
  assert.equal(h.tracker.overdue(), undefined, 'not before the limit');
  h.advance(1);
  assert.equal(h.tracker.overdue()?.index, 0, 'the silent one; its neighbour pulses');
  const reason = h.tracker.failHung(0);
  h.tracker.finish({ kind: 'killed', reason });
  const hung = h.ended.get(0)!;
  assert.match(hung.error!, /^hung: runset's hang guard killed Playwright and its browsers 12s after the test began, past its timeout of 1s and its teardown, with no sign of life from its Playwright worker for 12s/);
  assert.doesNotMatch(hung.error!, /timeoutSeconds/);
  assert.match(hung.output, /spinning now/, 'what it streamed is kept');
  assert.equal(hung.interrupted, undefined);
  for (const i of [1, 2]) {
    assert.equal(h.ended.get(i)?.interrupted, true, 'no setup project ran: given back to run again');
    assert.match(h.ended.get(i)!.error!, /^interrupted: another test of the same Playwright run, \[app\] › a\.spec\.ts › hangs, hung, and runset's hang guard stopped the run; runset runs it again$/);
  }
});

test('a test that raised its own timeout is not hung while its worker pulses, nor while silent within the new timeout', () => {
  const h = harness(['slow']);
  h.begin('slow', 0, 1000);
  h.advance(500);
  // test.setTimeout(30_000) at run time: the reporter never hears of it; the worker's pulse does.
  h.tracker.handle({ type: 'pulse', lane: 0, testId: 'id-slow', timeoutMs: 30_000 });
  for (let t = 0; t < 40; t++) {
    h.advance(1000);
    h.tracker.handle({ type: 'pulse', lane: 0, testId: 'id-slow', timeoutMs: 30_000 });
  }
  assert.equal(h.tracker.overdue(), undefined, '40 s with a live worker: Playwright can still stop it itself');
  h.advance(QUIET_MS + 1);
  assert.equal(h.tracker.overdue(), undefined, 'silent, but within 2 × 30 s + 10 s of its start');
  h.advance(guardLimitMs(30_000) - 40_500 - QUIET_MS - 1);
  assert.equal(h.tracker.overdue(), undefined);
  h.advance(1);
  assert.equal(h.tracker.overdue()?.index, 0);
  h.tracker.failHung(0);
  assert.match(h.ended.get(0)!.error!, /past its timeout of 30s/);
});

test("a pulse without the test's id (between hooks, or an old Playwright) keeps its lane's test alive; output does too", () => {
  const h = harness(['quiet lane', 'talks']);
  h.begin('quiet lane', 0);
  h.begin('talks', 1);
  for (let t = 0; t < 30; t++) {
    h.advance(1000);
    h.tracker.handle({ type: 'pulse', lane: 0 });
    h.tracker.handle({ type: 'output', key: h.key('talks'), text: '.' });
  }
  assert.equal(h.tracker.overdue(), undefined);
  h.advance(QUIET_MS + 1);
  assert.equal(h.tracker.overdue()?.index, 0, 'both silent now, past 2 × 1 s + 10 s');
});

test('no timeout (0) is judged by the entry\'s timeoutSeconds: a stuck worker still is', () => {
  const h = harness(['unbounded']);
  h.begin('unbounded', 0, 0);
  h.advance(guardLimitMs(30_000));
  assert.equal(h.tracker.overdue(), undefined);
  h.advance(1);
  assert.equal(h.tracker.overdue()?.index, 0);
});

test('once a setup project ran, the guard does not repeat it: the members left fail saying so, with what they streamed', () => {
  const h = harness(['hangs', 'running', 'waiting']);
  const setup = h.key('authenticate', 'setup');
  h.tracker.handle({ type: 'begin', keys: [setup, h.key('hangs'), h.key('running'), h.key('waiting')], setupProjects: ['setup', 'cleanup'] });
  h.tracker.handle({ type: 'testBegin', key: setup, retry: 0, timeoutMs: 1000, lane: 0, id: 'id-setup' });
  h.tracker.handle({ type: 'testEnd', key: setup, retry: 0, status: 'passed', final: true, ok: true, durationMs: 5, error: null, attachments: [] });
  h.begin('hangs', 0);
  h.begin('running', 1);
  h.tracker.handle({ type: 'output', key: h.key('running'), text: 'half way\n' });
  h.advance(guardLimitMs(1000) + 1);
  const reason = h.tracker.failHung(h.tracker.overdue()!.index);
  h.tracker.finish({ kind: 'killed', reason });
  for (const i of [1, 2]) {
    const m = h.ended.get(i)!;
    assert.equal(m.passed, false);
    assert.equal(m.interrupted, undefined, 'not given back: a new run would run setup again');
    assert.match(m.error!, /^not run to its end: another test .* hung, and runset's hang guard stopped the run; runset does not start it again, since a new Playwright run would run the setup project "setup" again \(run the set again to retry\)$/);
  }
  assert.match(h.ended.get(1)!.output, /half way/);
});
