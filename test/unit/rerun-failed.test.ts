import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { failedNames, planRerunOfFailures, RERUN_OF_LABEL } from '../../src/sets/rerun.js';
import { RunsetError } from '../../src/core/errors.js';
import { pipelineLabels } from '../../src/client/last-set.js';
import type { SuiteConfig } from '../../src/config/suite.js';
import type { RunState } from '../../src/core/states.js';
import type { TestRunRecord, TestRunSetRecord, TestSpec } from '../../src/core/types.js';

const key = randomBytes(32);
const cmd = (name: string): TestSpec => ({ name, type: 'command', run: ['true'], cwd: '/', tags: [], timeoutSeconds: 120, retries: 0 });
const suite = (names: string[]): SuiteConfig => ({
  file: '/x/runset.config.yaml',
  dir: '/x',
  environments: new Map([['staging', { name: 'staging', variables: {}, maxFailures: null, maxConcurrentSets: null, setTimeoutSeconds: 3600, failOnFlaky: false, allowPrivateTargets: false, allowSuiteUploads: false, overrideRules: {} }]]),
  tests: names.map(cmd),
  webhooks: [], codeHosts: { github: null, gitlab: null },
});
const earlier = { id: 'set-1', env: 'staging', overrides: {}, labels: { pipeline: 'p' } };

function setOf(status: RunState): TestRunSetRecord {
  return { id: 'set-1', env: 'staging', status, counts: { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 0 }, failing: 0, createdAt: '', startedAt: null, endedAt: null };
}
const member = (name: string, status: RunState) => ({ name, status }) as TestRunRecord;

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof RunsetError);
    return `${err.code}: ${err.message}`;
  }
  assert.fail('expected a refusal');
}

test('failedNames: the FAIL members of an ended set; a set running or with none failed is refused', () => {
  assert.deepEqual(failedNames(setOf('FAIL'), [member('a', 'SUCCESS'), member('b', 'FAIL'), member('c', 'FAIL')]), ['b', 'c']);
  assert.match(refusal(() => failedNames(setOf('RUNNING'), [member('a', 'FAIL')])), /^rerun_conflict: set set-1 is RUNNING: it has not ended/);
  assert.match(refusal(() => failedNames(setOf('WAITING'), [])), /^rerun_conflict: /);
  assert.match(refusal(() => failedNames(setOf('SUCCESS'), [member('a', 'SUCCESS')])), /^nothing_to_rerun: set set-1 ended SUCCESS with no member FAIL \(of 1\)/);
});

test('planRerunOfFailures: only the failed tests, in a fresh claim order, labelled rerun-of', () => {
  const set = planRerunOfFailures(suite(['a', 'b', 'c', 'd']), earlier, ['d', 'b'], { secretKey: key, keyId: null });
  assert.deepEqual(set.runs.map((run) => run.spec.name).sort(), ['b', 'd']);
  assert.deepEqual(set.runs.map((run) => run.position).sort(), [0, 1], 'positions index the kept tests only');
  assert.deepEqual(set.labels, { pipeline: 'p', [RERUN_OF_LABEL]: 'set-1' });
});

test('planRerunOfFailures: a failed test no longer planned is rerun_conflict naming it, never dropped', () => {
  assert.match(
    refusal(() => planRerunOfFailures(suite(['a', 'b']), earlier, ['b', 'gone'], { secretKey: key, keyId: null })),
    /^rerun_conflict: set set-1 had failing test "gone" that environment "staging" no longer plans/,
  );
});

test('pipelineLabels: a GitHub re-run attempt also looks at its earlier attempts, newest first', () => {
  const run = 'https://github.com/o/r/actions/runs/7';
  assert.deepEqual(pipelineLabels(run), [run]);
  assert.deepEqual(pipelineLabels(`${run}/attempts/2`), [`${run}/attempts/2`, run]);
  assert.deepEqual(pipelineLabels(`${run}/attempts/4`), [`${run}/attempts/4`, `${run}/attempts/3`, `${run}/attempts/2`, run]);
  assert.deepEqual(pipelineLabels('https://gitlab.example/p/-/pipelines/9'), ['https://gitlab.example/p/-/pipelines/9']);
});
