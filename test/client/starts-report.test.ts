/**
 * A member started more than once because a start of it was lost (src/core/starts.ts):
 * the client's summary and JUnit say so, and tell a pass after a lost lease
 * (not flaky) apart from a pass on retry (flaky); a server older than `starts`
 * reads as no restart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { convert } from 'xmlbuilder2';
import { buildJunit } from '../../src/client/reports/junit.js';
import { annotations, stepSummaryMarkdown } from '../../src/client/reports/github.js';
import type { ReportInput } from '../../src/client/reports/model.js';
import { readTestRuns } from '../../src/client/parse.js';
import { summaryLines } from '../../src/client/progress.js';
import type { TestRun } from '../../src/client/types.js';
import { passedHow, ranAgainReasons, restartsOf } from '../../src/core/starts.js';

function member(over: Partial<TestRun>): TestRun {
  return { id: 'm', name: 'a test', type: 'http', status: 'SUCCESS', attempts: 1, starts: 1, restarts: [], startedAt: null, endedAt: null, durationMs: 10, error: null, output: null, ...over };
}

function input(members: TestRun[], outcome: ReportInput['outcome'] = 'SUCCESS'): ReportInput {
  return { env: 'staging', setId: 'set-1', outcome, status: null, members, elapsedMs: 1500 };
}

const lostLease = member({ id: 'a', name: 'checkout', starts: 2, restarts: ['lease lost'] });
const retried = member({ id: 'b', name: 'login', attempts: 2, flaky: true });
const once = member({ id: 'c', name: 'home' });
const lostTwice = member({ id: 'd', name: 'search', status: 'FAIL', error: 'boom', starts: 3, restarts: ['worker lost', 'lease lost'] });

test('the summary tells a pass after a lost lease (not flaky) apart from a pass on retry (flaky)', () => {
  const lines = summaryLines(input([lostLease, retried, once]));
  assert.ok(lines.includes('  ⚠ login [http]: flaky, passed after 2 attempts'), lines.join('\n'));
  assert.ok(lines.includes('  ↻ checkout [http]: passed after a lost lease, not flaky: ran 2 times (lease lost)'), lines.join('\n'));
  assert.equal(lines.filter((l) => l.includes('home')).length, 0, 'a member that ran once is not listed');
  assert.ok(summaryLines(input([lostTwice], 'FAIL')).includes('  ↻ search [http]: ran 3 times (worker lost, lease lost)'));
});

test('JUnit: a restarted member carries starts and restarts and says why it ran again; a flaky one stays flaky', () => {
  type Case = Record<string, unknown> & { properties?: { property: Array<{ '@name': string; '@value': string }> | { '@name': string; '@value': string } } };
  const doc = convert(buildJunit(input([lostLease, retried, once, lostTwice], 'FAIL')), { format: 'object' }) as { testsuites: { testsuite: { testcase: Case[] } } };
  const [a, b, c, d] = doc.testsuites.testsuite.testcase;
  const props = (kase: Case | undefined) => {
    const list = kase?.properties?.property;
    return Object.fromEntries((Array.isArray(list) ? list : list ? [list] : []).map((p) => [p['@name'], p['@value']]));
  };
  assert.deepEqual(props(a), { starts: '2', restarts: 'lease lost' });
  assert.equal(a?.['system-out'], 'passed after a lost lease, not flaky: ran 2 times (lease lost)');
  assert.deepEqual(props(b), { flaky: 'true', attempts: '2' });
  assert.deepEqual(props(c), {});
  assert.deepEqual(props(d), { starts: '3', restarts: 'worker lost, lease lost' });
  assert.match(String((d?.failure as Record<string, unknown>)['#']), /ran 3 times \(worker lost, lease lost\)/);
});

test('GitHub: a notice per member started again, and the job summary says why beside the flaky one', () => {
  const lines = annotations(input([lostLease, retried, once], 'SUCCESS'));
  assert.deepEqual(lines.filter((l) => l.startsWith('::notice')), ['::notice title=runset ran again%3A checkout::passed after a lost lease, not flaky: ran 2 times (lease lost)']);
  const markdown = stepSummaryMarkdown(input([lostLease, retried]));
  assert.match(markdown, /\| ✅ passed \| checkout \| http \| 1 \| .* \| passed after a lost lease, not flaky: ran 2 times \(lease lost\) \|/);
  assert.match(markdown, /\| ⚠️ flaky \| login \| http \| 2 \| .* \| passed after 2 attempts \|/);
});

test('the SDK reads starts and restarts tolerantly: an older server sends neither, an unknown reason is dropped', () => {
  const base = { id: 'm', name: 'n', type: 'http', status: 'SUCCESS', attempts: 1 };
  const runs = readTestRuns({ testRuns: [base, { ...base, starts: 2, restarts: ['lease lost', 'cosmic ray'] }] });
  assert.deepEqual(runs?.map((r) => [r.starts, r.restarts]), [[undefined, undefined], [2, ['lease lost']]]);
  assert.deepEqual(summaryLines(input(runs ?? [])).filter((l) => l.includes('↻')), ['  ↻ n [http]: passed after a lost lease, not flaky: ran 2 times (lease lost)']);
});

test('the rules: restarts are the lost starts before the last start; retries follow them; how a pass came', () => {
  assert.deepEqual(restartsOf(1, ['lease lost']), [], 'lost and not started again yet');
  assert.deepEqual(restartsOf(3, ['worker lost', 'lease lost']), ['worker lost', 'lease lost']);
  assert.deepEqual(restartsOf(0, []), []);
  assert.deepEqual(ranAgainReasons({ status: 'SUCCESS', attempts: 3, restarts: ['lease lost'] }), ['lease lost', 'retry', 'retry']);
  assert.equal(passedHow({ status: 'SUCCESS', attempts: 1, starts: 2, restarts: ['worker lost'] }), 'after a lost worker');
  assert.equal(passedHow({ status: 'SUCCESS', attempts: 2, starts: 2, restarts: ['lease lost'] }), 'on retry');
  assert.equal(passedHow({ status: 'FAIL', attempts: 1 }), null);
  assert.equal(passedHow({ status: 'SUCCESS', attempts: 1 }), 'first run', 'an older server: no restarts');
});
