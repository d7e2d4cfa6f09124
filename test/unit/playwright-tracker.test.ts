/** The batch tracker: reporter events in, each member's begin and end out — no Playwright needed. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CaseResult } from '../../src/core/types.js';
import { BatchTracker } from '../../src/executors/playwright/tracker.js';
import type { ReporterEvent } from '../../src/executors/playwright/reporter.js';
import { caseKey } from '../../src/executors/listed-case.js';
import { errorSummary } from '../../src/executors/playwright/error-text.js';
import { selectionArgs, testListLine } from '../../src/executors/playwright/index.js';
import { batchKeyOf } from '../../src/core/batch.js';
import { caseSpec } from '../store/batch-contract.js';

function harness(titles: string[]) {
  const specs = titles.map((t) => caseSpec(t));
  const begun: Array<[number, number]> = [];
  const lanes: Array<number | undefined> = [];
  const ended = new Map<number, CaseResult>();
  let now = 1_000;
  const onBegin = (i: number, a: number, lane?: number) => {
    begun.push([i, a]);
    lanes.push(lane);
  };
  const tracker = new BatchTracker(specs, { onBegin, onEnd: (i, r) => ended.set(i, r) }, () => now);
  const key = (t: string) => caseKey({ project: '', file: 'a.spec.ts', titles: [t] });
  return { tracker, begun, lanes, ended, key, advance: (ms: number) => (now += ms) };
}

type TestEnd = Extract<ReporterEvent, { type: 'testEnd' }>;
const end = (key: string, over: Partial<TestEnd> = {}): TestEnd =>
  ({ type: 'testEnd', key, retry: 0, status: 'passed', final: true, ok: true, durationMs: 5, error: null, attachments: [], ...over });

test('begin and end move members live; output and attachments stay with their case', () => {
  const h = harness(['one', 'two']);
  h.tracker.handle({ type: 'begin', keys: [h.key('one'), h.key('two')] });
  h.tracker.handle({ type: 'testBegin', key: h.key('one'), retry: 0, timeoutMs: 5000 });
  h.tracker.handle({ type: 'output', key: h.key('one'), text: 'hello\n' });
  h.tracker.handle({ type: 'output', key: null, text: 'runner noise\n' });
  assert.deepEqual(h.begun, [[0, 1]]);
  h.advance(300);
  h.tracker.handle(end(h.key('one'), {
    status: 'failed', ok: false, error: 'Error: expected 1\n\nCall log:\n  - waiting\n    at /x.ts:1:1',
    attachments: [
      { name: 'screenshot', contentType: 'image/png', path: '/w/out/test-failed-1.png' },
      { name: 'screenshot', contentType: 'image/png', path: '/w/out/test-failed-2.png' },
      { name: 'trace', contentType: 'application/zip', path: '/w/out/trace.zip' },
    ],
  }));
  const one = h.ended.get(0)!;
  assert.equal(one.passed, false);
  assert.equal(one.error, 'Error: expected 1', 'the first paragraph, without call log or stack');
  assert.match(one.output, /^hello\nError: expected 1/);
  assert.ok(!one.output.includes('runner noise'));
  assert.deepEqual(one.artifacts.map((a) => a.name), ['screenshot.png', 'screenshot-2.png', 'trace.zip']);
  assert.equal(one.durationMs, 300);
  assert.equal(one.attempts, 1);
  assert.equal(h.tracker.unfinished, 1);
});

test('retries: only the final attempt ends the member; later attempts name their files apart', () => {
  const h = harness(['flaky']);
  const k = h.key('flaky');
  h.tracker.handle({ type: 'testBegin', key: k, retry: 0, timeoutMs: 5000 });
  h.tracker.handle(end(k, { status: 'failed', ok: false, final: false, error: 'boom', attachments: [{ name: 'trace', contentType: 'application/zip', path: '/a/trace.zip' }] }));
  assert.equal(h.ended.size, 0, 'a retry follows');
  h.tracker.handle({ type: 'testBegin', key: k, retry: 1, timeoutMs: 5000 });
  h.tracker.handle(end(k, { retry: 1, attachments: [{ name: 'trace', contentType: 'application/zip', path: '/b/trace.zip' }] }));
  const r = h.ended.get(0)!;
  assert.equal(r.passed, true);
  assert.equal(r.error, null);
  assert.equal(r.attempts, 2);
  assert.deepEqual(r.artifacts.map((a) => a.name), ['trace.zip', 'trace-retry1.zip']);
  assert.match(r.output, /boom\n\n── retry 1 ──/);
  assert.deepEqual(h.begun, [[0, 1], [0, 2]]);
});

test('lanes: the worker slot of each attempt reaches onBegin and the result; unknown stays undefined', () => {
  const h = harness(['a', 'b']);
  h.tracker.handle({ type: 'testBegin', key: h.key('a'), retry: 0, timeoutMs: 1000, lane: 1 });
  h.tracker.handle(end(h.key('a'), { status: 'failed', ok: false, final: false, lane: 1, error: 'x' }));
  h.tracker.handle({ type: 'testBegin', key: h.key('a'), retry: 1, timeoutMs: 1000, lane: 0 });
  h.tracker.handle(end(h.key('a'), { retry: 1, lane: 0 }));
  h.tracker.handle({ type: 'testBegin', key: h.key('b'), retry: 0, timeoutMs: 1000 });
  h.tracker.handle(end(h.key('b')));
  assert.deepEqual(h.lanes, [1, 0, undefined]);
  assert.equal(h.ended.get(0)?.lane, 0, 'the lane of the attempt that settled it');
  assert.equal('lane' in h.ended.get(1)!, false);
});

test('a skipped case passes, marked skipped; an expected failure (test.fail) passes unmarked', () => {
  const h = harness(['skip', 'expected', 'plain', 'failed then skipped']);
  h.tracker.handle(end(h.key('skip'), { status: 'skipped' }));
  h.tracker.handle(end(h.key('expected'), { status: 'failed', ok: true, error: 'expected to fail' }));
  h.tracker.handle(end(h.key('plain')));
  // Playwright judges a failure followed by a skip on the retry "unexpected": it failed, and is not marked.
  h.tracker.handle(end(h.key('failed then skipped'), { status: 'skipped', retry: 1, ok: false }));
  assert.equal(h.ended.get(0)?.passed, true);
  assert.equal(h.ended.get(0)?.skipped, true);
  assert.match(h.ended.get(0)!.output, /skipped/);
  assert.equal(h.ended.get(1)?.passed, true);
  assert.equal(h.ended.get(1)?.skipped, undefined);
  assert.equal(h.ended.get(2)?.skipped, undefined);
  assert.equal(h.ended.get(3)?.passed, false);
  assert.equal(h.ended.get(3)?.skipped, undefined);
});

test('a crashed runner fails what it never ran, naming the cause; a case gone from the suite says so', () => {
  const h = harness(['ran', 'gone', 'unrun']);
  h.tracker.handle({ type: 'begin', keys: [h.key('ran'), h.key('unrun')] });
  h.tracker.handle({ type: 'testBegin', key: h.key('ran'), retry: 0, timeoutMs: 1000 });
  h.tracker.finish({ kind: 'exited', code: 1, signal: null, log: 'Error: worker process exited unexpectedly\nsome log' });
  assert.equal(h.ended.get(0)?.error, 'Playwright exited with code 1 while this test was running: Error: worker process exited unexpectedly\nsome log');
  assert.match(h.ended.get(1)!.error!, /not found in the suite any more/);
  assert.match(h.ended.get(2)!.error!, /before running this test/);
  assert.match(h.ended.get(2)!.output, /some log/);
});

test('a run that failed in setup lists nothing: each member gets Playwright\'s error, and the output outside tests', () => {
  const h = harness(['a']);
  h.tracker.handle({ type: 'begin', keys: [] });
  h.tracker.handle({ type: 'output', key: null, text: 'web server: cannot bind\n' });
  h.tracker.handle({ type: 'error', message: 'Error: Process from config.webServer was not able to start. Exit code: 1' });
  h.tracker.finish({ kind: 'exited', code: 1, signal: null, log: '' });
  assert.equal(h.ended.get(0)?.error, 'Playwright exited with code 1 before running this test: Error: Process from config.webServer was not able to start. Exit code: 1');
  assert.match(h.ended.get(0)!.output, /not able to start[\s\S]*web server: cannot bind/);
});

test('a runner that dies before reporting: its own first error lines, without stack or code frames', () => {
  const h = harness(['a']);
  const log = [
    '\u001b[31mError: Cannot find module \'./missing\'\u001b[39m',
    'Require stack:',
    '- /suite/playwright.config.ts',
    '',
    '   1 | import x from \'./missing\';',
    '     | ^',
    '    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)',
    '    at /suite/playwright.config.ts:1:1',
  ].join('\n');
  h.tracker.finish({ kind: 'exited', code: 1, signal: null, log });
  assert.equal(h.ended.get(0)?.error, "Playwright exited with code 1 before running this test: Error: Cannot find module './missing'\nRequire stack:\n- /suite/playwright.config.ts");
  assert.match(h.ended.get(0)!.output, /at Module\._resolveFilename/, 'the whole tail stays in the output');
});

test('an aborted batch ends nothing: the worker gives its members back', () => {
  const h = harness(['a']);
  h.tracker.finish({ kind: 'aborted' });
  assert.equal(h.ended.size, 0);
});

test('idle before any word: Playwright that never loaded runset reporter is stopped after PROCESS_START_MS, not 5 minutes', () => {
  const h = harness(['a']);
  h.advance(60_000);
  assert.equal(h.tracker.idle(), false);
  h.advance(1);
  assert.equal(h.tracker.idle(), true);
  assert.equal(h.tracker.started, false);
});

test('once Playwright said ready, its webServer and globalSetup get the whole idle limit', () => {
  const h = harness(['a']);
  h.tracker.handle({ type: 'ready' });
  h.advance(5 * 60_000);
  assert.equal(h.tracker.idle(), false, 'a webServer that boots for minutes is not stuck');
  h.advance(1);
  assert.equal(h.tracker.idle(), true);
  assert.equal(h.tracker.started, true);
});

test('idle: nothing running, something waiting, no word for the limit', () => {
  const h = harness(['a']);
  h.tracker.handle({ type: 'ready' });
  assert.equal(h.tracker.idle(), false);
  h.advance(5 * 60_000 + 1);
  assert.equal(h.tracker.idle(), true);
  h.tracker.handle({ type: 'testBegin', key: h.key('a'), retry: 0, timeoutMs: 1000 });
  h.advance(5 * 60_000 + 1);
  assert.equal(h.tracker.idle(), false, 'a running case is the watchdog\'s business, not idleness');
});

test('test-list lines name project, file and titles; a title holding the separator stops the line', () => {
  assert.equal(testListLine(caseSpec('plain')), 'a.spec.ts › plain');
  const nested = caseSpec('x', 'e2e', 'chromium');
  nested.case!.titles = ['group', 'it works'];
  assert.equal(testListLine(nested), '[chromium] › a.spec.ts › group › it works');
  nested.case!.titles = ['a › b', 'child'];
  assert.equal(testListLine(nested), '[chromium] › a.spec.ts');
});

test('batch keys: one per entry, whatever the project; none for other tests or undiscovered entries', () => {
  assert.equal(batchKeyOf(caseSpec('a')), batchKeyOf(caseSpec('b')));
  assert.equal(batchKeyOf(caseSpec('a', 'e2e', 'chromium')), batchKeyOf(caseSpec('a', 'e2e', 'setup')), 'every project of an entry in one Playwright process');
  assert.notEqual(batchKeyOf(caseSpec('a', 'one')), batchKeyOf(caseSpec('a', 'two')));
  const { case: _case, ...entry } = caseSpec('a');
  assert.equal(batchKeyOf(entry), null);
  assert.equal(batchKeyOf({ name: 'c', type: 'command', run: ['true'], cwd: '/', tags: [], timeoutSeconds: 1, retries: 0 }), null);
});

test('selection: a test-list file from Playwright 1.56; before it, every project as --project=<name>, then file:line locations', () => {
  const specs = [caseSpec('one', 'e2e', 'chromium'), caseSpec('two', 'e2e', 'chromium'), caseSpec('set up', 'e2e', 'setup')];
  specs[1]!.case!.line = 7;
  assert.deepEqual(selectionArgs(specs, '1.65.1', '/w/list.txt'), ['--test-list', '/w/list.txt']);
  assert.deepEqual(selectionArgs(specs, '2.0.0', '/w/list.txt'), ['--test-list', '/w/list.txt']);
  // `--project chromium a.spec.ts:1` would ask older versions for a project named "a.spec.ts:1".
  assert.deepEqual(selectionArgs(specs, '1.49.0', '/w/list.txt'), ['--project=chromium', '--project=setup', 'a\\.spec\\.ts:1', 'a\\.spec\\.ts:7']);
  assert.deepEqual(selectionArgs([caseSpec('one')], '1.30.0', '/w/list.txt'), ['a\\.spec\\.ts:1'], 'no projects: locations alone');
  assert.deepEqual(selectionArgs([caseSpec('one'), specs[0]!], '1.30.0', '/w/list.txt'), ['a\\.spec\\.ts:1'], 'an unnamed project cannot be named: every project runs');
});

test('error summaries: a message is read from its start; printed output from its first error line', () => {
  assert.equal(errorSummary('Database unreachable\n    at setup (/s/g.ts:1:1)\nan error later', false), 'Database unreachable\nan error later');
  assert.equal(errorSummary('Running 3 tests using 1 worker\n\u001b[31mError: boom\u001b[39m\n   2 |   x\n     |   ^\n    at /s/a.ts:2:3'), 'Error: boom');
  assert.equal(errorSummary('    at /only/frames.ts:1:1\n'), '');
});

test('a case that never began because a project it depends on failed says which test failed', () => {
  const h = harness(['one']);
  const setup = caseKey({ project: 'setup', file: 'auth.setup.ts', titles: ['prepare'] }); // run by Playwright as a dependency, not in this batch
  h.tracker.handle({ type: 'begin', keys: [setup, h.key('one')] });
  h.tracker.handle({ type: 'testBegin', key: setup, retry: 0, timeoutMs: 1000 });
  h.tracker.handle(end(setup, { status: 'failed', ok: false, error: 'Error: setup broke\n    at /s/auth.setup.ts:2:3' }));
  h.tracker.finish({ kind: 'exited', code: 1, signal: null, log: '' });
  const one = h.ended.get(0)!;
  assert.equal(one.passed, false);
  assert.equal(one.error, 'Playwright exited with code 1 before running this test: a test of a project it depends on failed: [setup] › auth.setup.ts › prepare: Error: setup broke');
});

test('output keeps no terminal colours, from the test, its retries or the runner (a webServer)', () => {
  const h = harness(['one', 'two']);
  h.tracker.handle({ type: 'begin', keys: [h.key('one'), h.key('two')] });
  h.tracker.handle({ type: 'output', key: null, text: '[WebServer] \u001b[32mready\u001b[39m on :3000\n' });
  h.tracker.handle({ type: 'testBegin', key: h.key('one'), retry: 0, timeoutMs: 1000 });
  h.tracker.handle({ type: 'output', key: h.key('one'), text: '\u001b[1mbold\u001b[22m\n' });
  h.tracker.handle(end(h.key('one')));
  h.tracker.finish({ kind: 'exited', code: 1, signal: null, log: '\u001b[31mError: webServer exited\u001b[39m\n' });
  assert.equal(h.ended.get(0)!.output, 'bold\n');
  const two = h.ended.get(1)!.output;
  assert.match(two, /\[WebServer\] ready on :3000/);
  assert.match(two, /Error: webServer exited/);
  assert.ok(!two.includes('\u001b'), 'no escape character left');
});

test("runset's notices about the whole run (video turned off) head every member's output, once each", () => {
  const h = harness(['one', 'two']);
  const notice = { type: 'notice', text: 'video is off for this run' } as const;
  h.tracker.handle(notice);
  h.tracker.handle(notice); // the config is loaded by the runner and each worker: each may say it
  h.tracker.handle({ type: 'testBegin', key: h.key('one'), retry: 0, timeoutMs: 1000 });
  h.tracker.handle({ type: 'output', key: h.key('one'), text: 'hello\n' });
  h.tracker.handle(end(h.key('one')));
  h.tracker.finish({ kind: 'exited', code: 0, signal: null, log: '' });
  assert.equal(h.ended.get(0)!.output, 'runset: video is off for this run\nhello\n');
  assert.match(h.ended.get(1)!.output, /^runset: video is off for this run\n/);
});

test("a notice naming projects heads only their members' output: video off where a project asked for it", () => {
  const specs = [caseSpec('asked', 'e2e', 'recorded'), caseSpec('never asked', 'e2e', 'quiet')];
  const ended = new Map<number, CaseResult>();
  const tracker = new BatchTracker(specs, { onBegin: () => undefined, onEnd: (i, r) => ended.set(i, r) });
  tracker.handle({ type: 'notice', text: 'video is off for this run', projects: ['recorded'] });
  tracker.handle({ type: 'notice', text: 'video is off for this run', projects: ['recorded'] });
  tracker.finish({ kind: 'exited', code: 0, signal: null, log: '' });
  assert.match(ended.get(0)!.output, /^runset: video is off for this run\n/);
  assert.equal(ended.get(0)!.output.split('video is off').length, 2, 'said once');
  assert.doesNotMatch(ended.get(1)!.output, /video is off/, 'its own project recorded no video: nothing was turned off for it');
});
