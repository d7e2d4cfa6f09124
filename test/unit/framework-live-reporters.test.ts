/**
 * runset's Mocha reporter and Cucumber formatter on their live side, fed the
 * events their framework hands them (a Mocha runner's, Cucumber's envelopes)
 * with the live file named in the environment: what they append is read back
 * by the live tracker with the adapter's own reader, so a case begins at its
 * first attempt and ends once, after its last, with its report entry's result.
 * Real Mocha and Cucumber runs are test/e2e/frameworks-live.test.ts.
 */
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CaseResult, FrameworkTestSpec } from '../../src/core/types.js';
import type { FrameworkAdapter } from '../../src/executors/frameworks/adapter.js';
import RunsetCucumberFormatter from '../../src/executors/frameworks/cucumber-reporter.js';
import { cucumberAdapter } from '../../src/executors/frameworks/cucumber.js';
import type { LiveEvent } from '../../src/executors/frameworks/live-events.js';
import { FrameworkTracker } from '../../src/executors/frameworks/live.js';
import { mochaAdapter } from '../../src/executors/frameworks/mocha.js';
import { REPORTER_FILE_ENV } from '../../src/executors/playwright/reporter.js';

const DIR = '/suite';
let work = '';
let events = '';

beforeEach(() => {
  work = mkdtempSync(path.join(tmpdir(), 'runset-live-reporters-'));
  events = path.join(work, 'events.jsonl');
  process.env[REPORTER_FILE_ENV] = events;
});
afterEach(() => {
  delete process.env[REPORTER_FILE_ENV];
  rmSync(work, { recursive: true, force: true });
});

function spec(file: string, titles: string[]): FrameworkTestSpec {
  return { type: 'mocha', name: titles.join(' '), tags: [], timeoutSeconds: 30, retries: 0, dir: DIR, args: [], timeoutOverride: false, retriesOverride: false, case: { entry: 'e', file, titles } };
}

/** The appended events, replayed into a tracker of `specs`: what began, what ended with which result. */
function replay(adapter: FrameworkAdapter, specs: FrameworkTestSpec[]) {
  const sent = readFileSync(events, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as LiveEvent);
  const begun: number[] = [];
  const ended: Array<[number, CaseResult]> = [];
  const tracker = new FrameworkTracker(specs, adapter, DIR, true, { onBegin: (i) => begun.push(i), onEnd: (i, r) => ended.push([i, r]) });
  for (const event of sent) tracker.handle(event);
  return { sent, begun, ended };
}

interface FakeTest {
  title: string;
  file: string;
  type: string;
  duration?: number;
  titlePath(): string[];
  currentRetry(): number;
}

test('Mocha: a test begins at its first attempt and ends once, after its retries, as its report entry', () => {
  const reporter = createRequire(import.meta.url)('../../src/executors/frameworks/mocha-reporter.cjs') as (runner: EventEmitter, options: object) => void;
  const runner = new EventEmitter();
  reporter(runner, { reporterOptions: { output: path.join(work, 'report.json') } });
  let retry = 0;
  const flaky: FakeTest = { title: 'flaky', file: `${DIR}/a.test.js`, type: 'test', duration: 7, titlePath: () => ['group', 'flaky'], currentRetry: () => retry };
  runner.emit('test', flaky);
  runner.emit('retry', flaky, new Error('first try'));
  retry = 1;
  runner.emit('test', flaky); // its second attempt: no second begin
  runner.emit('pass', flaky);
  const { sent, begun, ended } = replay(mochaAdapter, [spec('a.test.js', ['group', 'flaky'])]);
  assert.deepEqual(sent.map((e) => e.type), ['ready', 'caseBegin', 'results'], 'ready as Mocha constructs it; a begin at the first attempt, one end after the last');
  assert.deepEqual(begun, [0]);
  assert.deepEqual(ended.map(([i, r]) => [i, r.passed, r.attempts, r.durationMs]), [[0, true, 2, 7]]);
  assert.match(ended[0]![1].output, /first try/, "the failed attempt's message is kept, as in the report");
});

test('Mocha: without the live file named, its reporter appends nothing', () => {
  delete process.env[REPORTER_FILE_ENV];
  const reporter = createRequire(import.meta.url)('../../src/executors/frameworks/mocha-reporter.cjs') as (runner: EventEmitter, options: object) => void;
  const runner = new EventEmitter();
  reporter(runner, { reporterOptions: { output: path.join(work, 'report.json') } });
  const one: FakeTest = { title: 'one', file: `${DIR}/a.test.js`, type: 'test', titlePath: () => ['one'], currentRetry: () => 0 };
  runner.emit('test', one);
  runner.emit('pass', one);
  assert.throws(() => readFileSync(events), /ENOENT/);
});

const at = (seconds: number) => ({ seconds, nanos: 0 });

/** A feature with a background, a scenario, and a rule holding a second one (its envelopes as Cucumber streams them). */
const DOCUMENT = {
  uri: 'features/a.feature',
  feature: {
    name: 'Shop',
    children: [
      { background: { id: 'b', name: '', steps: [{ id: 'bs', keyword: 'Given ' }] } },
      { scenario: { id: 's1', name: 'one', location: { line: 5 }, steps: [{ id: 'st1', keyword: 'When ' }] } },
      { rule: { name: 'group', children: [{ scenario: { id: 's2', name: 'two', location: { line: 10 }, steps: [{ id: 'st2', keyword: 'Then ' }] } }] } },
    ],
  },
};

const pickle = (id: string, scenario: string, name: string, step: string) => ({ pickle: { id, uri: 'features/a.feature', name, astNodeIds: [scenario], steps: [{ id: `${id}-step`, text: 'it', astNodeIds: [step] }] } });
const testCase = (id: string, pickleId: string) => ({ testCase: { id, pickleId, testSteps: [{ id: `${id}-ts`, pickleStepId: `${pickleId}-step` }] } });
const attempt = (id: string, testCaseId: string, n: number, status: string, willBeRetried: boolean, second: number) => [
  { testCaseStarted: { id, testCaseId, attempt: n, timestamp: at(second) } },
  { testStepFinished: { testCaseStartedId: id, testStepId: `${testCaseId}-ts`, testStepResult: { status, message: status === 'FAILED' ? 'Error: nope' : undefined } } },
  { testCaseFinished: { testCaseStartedId: id, timestamp: at(second + 1), willBeRetried } },
];

test('Cucumber: a scenario begins at its first attempt and ends once, after its last, with its rule and line', () => {
  const broadcaster = new EventEmitter();
  let closed = false;
  const formatter = new RunsetCucumberFormatter({ eventBroadcaster: broadcaster, cleanup: () => ((closed = true), Promise.resolve()) });
  const envelopes = [
    { gherkinDocument: DOCUMENT },
    pickle('p1', 's1', 'one', 'st1'),
    pickle('p2', 's2', 'two', 'st2'),
    testCase('t1', 'p1'),
    testCase('t2', 'p2'),
    ...attempt('a1', 't1', 0, 'FAILED', true, 0),
    ...attempt('a2', 't1', 1, 'PASSED', false, 2),
    ...attempt('a3', 't2', 0, 'FAILED', false, 4),
  ];
  for (const e of envelopes) broadcaster.emit('envelope', e);
  const specs = [spec('features/a.feature', ['Shop', 'one']), spec('features/a.feature', ['Shop', 'group', 'two'])];
  const { sent, begun, ended } = replay(cucumberAdapter, specs);
  assert.deepEqual(sent.map((e) => e.type), ['ready', 'caseBegin', 'results', 'caseBegin', 'results'], 'ready as Cucumber constructs it; a retried attempt neither begins nor ends its scenario');
  assert.deepEqual(begun, [0, 1]);
  assert.deepEqual(ended.map(([i, r]) => [i, r.passed, r.attempts, r.durationMs, r.error]), [
    [0, true, 2, 2000, null],
    [1, false, 1, 1000, 'Error: nope'],
  ]);
  const fragment = (sent[2] as { report: Array<{ gherkinDocument?: typeof DOCUMENT }> }).report;
  assert.deepEqual(fragment[0]?.gherkinDocument?.feature.children.map((c) => Object.keys(c)[0]), ['background', 'scenario'], 'the document is pruned to its scenario');
  return formatter.finished().then(() => assert.ok(closed, 'its output is closed when Cucumber is done'));
});

test('Cucumber: the reader reads a live fragment (a list of envelopes) as it reads the stream', () => {
  const lines = [{ gherkinDocument: DOCUMENT }, pickle('p1', 's1', 'one', 'st1'), testCase('t1', 'p1'), ...attempt('a1', 't1', 0, 'PASSED', false, 0)];
  const fromStream = cucumberAdapter.read(lines.map((l) => JSON.stringify(l)).join('\n'), DIR);
  const fromList = cucumberAdapter.read(JSON.stringify(lines), DIR);
  assert.deepEqual(fromList, fromStream);
  assert.deepEqual(fromList.cases.map((c) => [c.titles, c.line]), [[['Shop', 'one'], 5]]);
  assert.throws(() => cucumberAdapter.read('[1, 2]', DIR), /list of envelopes/);
});
