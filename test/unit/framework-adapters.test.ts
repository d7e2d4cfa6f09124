/**
 * The Mocha and Cucumber adapters' exact command lines for a share (which
 * cases, by what pattern), what their readers say of a report they cannot
 * read, the one worker their entries take unless they set `workers:`, and
 * when they report live.
 * Their listing and runs on the real frameworks are proven in
 * test/e2e/frameworks.test.ts and test/e2e/framework-failures.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FrameworkCase, FrameworkTestSpec } from '../../src/core/types.js';
import { parseSuiteConfig } from '../../src/config/suite.js';
import { cucumberAdapter } from '../../src/executors/frameworks/cucumber.js';
import { mochaAdapter } from '../../src/executors/frameworks/mocha.js';

const SPEC: FrameworkTestSpec = { name: 's', type: 'mocha', dir: '/srv/suite', args: ['--require', 'setup.js'], tags: [], timeoutSeconds: 30, retries: 2, timeoutOverride: true, retriesOverride: true };

const at = (file: string, titles: string[], line?: number): FrameworkCase => ({ entry: 's', file, titles, ...(line ? { line } : {}) });

test('Mocha: a share runs its files with a --grep of exactly its full titles, escaped; several workers run it in parallel mode', () => {
  const cases = [at('a.test.js', ['group (1)', 'costs $5.*']), at('a.test.js', ['top']), at('b.test.js', ['x'])];
  const args = mochaAdapter.runArgs(SPEC, cases, { report: '/w/report.json', workers: 1 });
  assert.deepEqual(args.slice(0, 2), ['--require', 'setup.js'], "the entry's args come first");
  assert.equal(args[args.indexOf('--grep') + 1], '^(?:group \\(1\\) costs \\$5\\.\\*|top|x)$');
  assert.deepEqual(args.slice(-2), ['/srv/suite/a.test.js', '/srv/suite/b.test.js']);
  assert.equal(args[args.indexOf('--timeout') + 1], '30000');
  assert.equal(args[args.indexOf('--retries') + 1], '2');
  assert.ok(!args.includes('--parallel'), 'one worker: Mocha runs serially, as the suite would');
  const parallel = mochaAdapter.runArgs(SPEC, cases, { report: '/w/report.json', workers: 3 });
  assert.deepEqual(parallel.slice(parallel.indexOf('--parallel'), parallel.indexOf('--parallel') + 3), ['--parallel', '--jobs', '3']);
  assert.ok(mochaAdapter.listArgs(SPEC, '/w/list.json').includes('--dry-run'));
});

test('Cucumber: a share runs each scenario and example row by file:line, and --name keeps paths a profile adds from running more', () => {
  const spec: FrameworkTestSpec = { ...SPEC, type: 'cucumber', args: [] };
  const cases = [
    at('features/b.feature', ['Shop', 'pays'], 9),
    at('features/a.feature', ['Shop', 'eat <n>', 'small', '#1.2: eat 5'], 14),
    at('features/a.feature', ['Shop', 'group', 'eat', '#1.1'], 12),
    at('features/a.feature', ['Shop', 'costs $5?'], 3),
  ];
  const args = cucumberAdapter.runArgs(spec, cases, { report: '/w/messages.ndjson', workers: 1 });
  assert.deepEqual(args.slice(-2), ['features/b.feature:9', 'features/a.feature:3:12:14']);
  // An outline row named `#1.1` alone has its outline's name, one of the titles before it.
  assert.equal(args[args.indexOf('--name') + 1], '^(?:pays|eat 5|group|eat|costs \\$5\\?)$');
  assert.equal(args[args.indexOf('--format') + 1], 'message:/w/messages.ndjson');
  assert.equal(args[args.indexOf('--retry') + 1], '2');
  assert.ok(!args.includes('--parallel'));
  assert.equal(cucumberAdapter.runArgs(spec, cases, { report: '/w/m', workers: 2 }).join(' ').includes('--parallel 2'), true);
});

test('a report that cannot be read says what is wrong with it', () => {
  assert.throws(() => mochaAdapter.read('{"tests": []}', '/srv'), /the report has no "cases" and "hookErrors" lists/);
  assert.throws(() => mochaAdapter.read('not json', '/srv'), /the report is not JSON/);
  assert.throws(() => cucumberAdapter.read('{"meta": {}}\n{oops\n', '/srv'), /line 2 of the message stream is not JSON/);
  assert.throws(() => cucumberAdapter.read('{"testCase": {"id": "t1", "pickleId": "p1"}}\n', '/srv'), /test case t1 names a pickle the stream does not hold/);
});

test('a Mocha or Cucumber entry takes one framework worker unless it sets workers', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-fw-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'suite'));
  const text = `environments:\n  e2e: {}\ntests:\n  - { name: m, type: mocha, dir: suite }\n  - { name: c, type: cucumber, dir: suite, retries: 1 }\n  - { name: w, type: mocha, dir: suite, workers: 4 }\n  - { name: v, type: vitest, dir: suite }\n`;
  const tests = parseSuiteConfig(text, path.join(dir, 'runset.config.yaml')).tests as FrameworkTestSpec[];
  assert.deepEqual(
    tests.map((s) => [s.name, s.type, s.workers]),
    [['m', 'mocha', 1], ['c', 'cucumber', 1], ['w', 'mocha', 4], ['v', 'vitest', undefined]],
  );
  assert.equal(tests[1]?.retriesOverride, true, "Cucumber takes runset's retries (--retry)");
});

test('Mocha reports live in a serial run only (parallel mode hands reporters a file when it has finished); Cucumber in both', () => {
  assert.deepEqual(mochaAdapter.liveReporter?.('12.0.3', { report: '/tmp/r.json', workers: 1 }), { args: [], caseStarts: true, readyBeforeSetup: true }, 'its own reporter, already on the command line; ready before the global setup');
  assert.equal(mochaAdapter.liveReporter?.('12.0.3', { report: '/tmp/r.json', workers: 4 }), undefined);
  const cucumber = cucumberAdapter.liveReporter?.('11.3.0', { report: '/tmp/r.ndjson', workers: 4 });
  assert.equal(cucumber?.caseStarts, true);
  assert.deepEqual(cucumber?.args[0], '--format');
  assert.match(cucumber?.args[1] ?? '', /^"\/.+\/cucumber-reporter\.js":"\/dev\/null"$/, 'runset\'s formatter, both parts quoted, writing nowhere');
});
