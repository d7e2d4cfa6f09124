import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { planTestRunSet } from '../../src/sets/plan.js';
import { planRerun } from '../../src/sets/rerun.js';
import { RunsetError } from '../../src/core/errors.js';
import { resolveVariables, unseal } from '../../src/secrets/index.js';
import type { SuiteConfig } from '../../src/config/suite.js';
import type { EnvironmentConfig, TestSpec } from '../../src/core/types.js';

const key = randomBytes(32);
const cmd = (name: string, environments?: string[]): TestSpec => ({
  name,
  type: 'command',
  run: ['true'],
  cwd: '/',
  tags: [],
  timeoutSeconds: 120,
  retries: 0,
  ...(environments ? { environments } : {}),
});

const suite: SuiteConfig = {
  file: '/x/runset.config.yaml',
  dir: '/x',
  environments: new Map<string, EnvironmentConfig>([
    ['staging', { name: 'staging', variables: { BASE_URL: { kind: 'plain', value: 'https://staging' }, TOKEN: { kind: 'env', name: 'STAGING_TOKEN' } }, maxFailures: 3, maxConcurrentSets: null, setTimeoutSeconds: 3600, failOnFlaky: false, allowPrivateTargets: false, allowSuiteUploads: false, overrideRules: {} }],
    ['preview', { name: 'preview', variables: {}, maxFailures: null, maxConcurrentSets: null, setTimeoutSeconds: 3600, failOnFlaky: false, allowPrivateTargets: false, allowSuiteUploads: false, overrideRules: {} }],
    ['empty', { name: 'empty', variables: {}, maxFailures: null, maxConcurrentSets: null, setTimeoutSeconds: 3600, failOnFlaky: false, allowPrivateTargets: false, allowSuiteUploads: false, overrideRules: {} }],
  ]),
  tests: [cmd('everywhere'), cmd('staging only', ['staging']), cmd('preview only', ['preview'])],
  webhooks: [], codeHosts: { github: null, gitlab: null },
};

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof RunsetError);
    return `${err.code}: ${err.message}`;
  }
  return 'no error';
}

test('members are the tests of the environment, in file order', () => {
  const set = planTestRunSet(suite, { env: 'staging' }, { secretKey: key, keyId: 'k1' });
  assert.deepEqual(set.runs.map((r) => r.spec.name), ['everywhere', 'staging only']);
  assert.deepEqual(set.runs.map((r) => r.position), [0, 1]);
  assert.equal(set.keyId, 'k1');
  assert.deepEqual(set.variables.BASE_URL, { kind: 'plain', value: 'https://staging' });
});

test('overrides replace declared plain values', () => {
  const set = planTestRunSet(suite, { env: 'staging', envOverride: { BASE_URL: 'https://pr-42' } }, { secretKey: key, keyId: null });
  assert.deepEqual(set.variables.BASE_URL, { kind: 'plain', value: 'https://pr-42' });
  assert.deepEqual(set.overrides, { BASE_URL: { kind: 'plain', value: 'https://pr-42' } });
});

test('an override of a secret variable is sealed, never kept in clear', () => {
  const set = planTestRunSet(suite, { env: 'staging', envOverride: { TOKEN: 'tok-123' } }, { secretKey: key, keyId: null });
  const sealed = set.variables.TOKEN;
  assert.equal(sealed?.kind, 'sealed');
  assert.ok(!JSON.stringify(set).includes('tok-123'));
  assert.equal(unseal((sealed as { box: string }).box, key), 'tok-123');
  const resolved = resolveVariables(set.variables, { env: {}, key });
  assert.equal(resolved.values.TOKEN, 'tok-123');
  assert.deepEqual(resolved.secrets, ['tok-123']);
});

test('an undeclared override key is refused, naming it and the declared ones', () => {
  assert.equal(
    codeOf(() => planTestRunSet(suite, { env: 'staging', envOverride: { BASE_ULR: 'x' } }, { secretKey: key, keyId: null })),
    'undeclared_variable: envOverride.BASE_ULR: environment "staging" does not declare BASE_ULR; declared variables: BASE_URL, TOKEN',
  );
});

test('an unknown environment is refused, listing the known ones', () => {
  assert.match(
    codeOf(() => planTestRunSet(suite, { env: 'prod' }, { secretKey: key, keyId: null })),
    /^unknown_environment: .*known environments: staging, preview, empty$/,
  );
});

test('a set with no tests is refused: an empty run must not pass', () => {
  const only = { ...suite, tests: [cmd('staging only', ['staging'])] };
  assert.match(codeOf(() => planTestRunSet(only, { env: 'empty' }, { secretKey: key, keyId: null })), /^no_tests: /);
});

test('a secret read from the environment must exist where it runs', () => {
  const set = planTestRunSet(suite, { env: 'staging' }, { secretKey: key, keyId: null });
  assert.throws(() => resolveVariables(set.variables, { env: {}, key }), /STAGING_TOKEN is not set/);
  assert.equal(resolveVariables(set.variables, { env: { STAGING_TOKEN: 'abc' }, key }).values.TOKEN, 'abc');
});

// ── "run again" (planRerun) ──

const earlierSet = () => {
  const first = planTestRunSet(suite, { env: 'staging', envOverride: { BASE_URL: 'https://pr-7', TOKEN: 'tok-123' }, labels: { branch: 'pr-7' } }, { secretKey: key, keyId: null });
  return { id: first.id, env: first.env, overrides: first.overrides, labels: first.labels };
};

test('run again: same environment and overrides, the secret one resealed, never in clear', () => {
  const again = planRerun(suite, earlierSet(), { secretKey: key, keyId: 'k1' });
  assert.equal(again.env, 'staging');
  assert.deepEqual(again.labels, { branch: 'pr-7' }, 'the labels are kept');
  assert.deepEqual(again.overrides.BASE_URL, { kind: 'plain', value: 'https://pr-7' });
  const token = again.overrides.TOKEN;
  assert.equal(token?.kind, 'sealed');
  assert.equal(unseal((token as { box: string }).box, key), 'tok-123');
  assert.doesNotMatch(JSON.stringify(again), /tok-123/);
});

test('run again after the environment left the config: rerun_conflict naming it and the configured ones', () => {
  const earlier = earlierSet();
  const today: SuiteConfig = { ...suite, environments: new Map([...suite.environments].filter(([name]) => name !== 'staging')) };
  assert.equal(
    codeOf(() => planRerun(today, earlier, { secretKey: key, keyId: null })),
    `rerun_conflict: set ${earlier.id} ran on environment "staging", which the config no longer has; configured environments: preview, empty. Create a new set instead.`,
  );
});

test('run again after an overridden variable left the environment: rerun_conflict naming it', () => {
  const earlier = earlierSet();
  const staging = suite.environments.get('staging')!;
  const today: SuiteConfig = {
    ...suite,
    environments: new Map([...suite.environments, ['staging', { ...staging, variables: { TOKEN: staging.variables.TOKEN! } }]]),
  };
  assert.equal(
    codeOf(() => planRerun(today, earlier, { secretKey: key, keyId: null })),
    `rerun_conflict: set ${earlier.id} overrode BASE_URL, which environment "staging" no longer declares. Create a new set with the overrides it declares instead.`,
  );
});

test('run again under another RUNSET_SECRET_KEY: rerun_conflict naming the secret, not a server fault', () => {
  const earlier = earlierSet();
  const message = codeOf(() => planRerun(suite, earlier, { secretKey: randomBytes(32), keyId: null }));
  assert.equal(
    message,
    `rerun_conflict: set ${earlier.id} has a secret override of TOKEN that this server cannot read: it was sealed under another RUNSET_SECRET_KEY. Create a new set with the value instead.`,
  );
});

test('set and member ids are UUIDv7: valid UUIDs, time-ordered, so the store indexes them at their newest end', () => {
  const plans = Array.from({ length: 3 }, () => planTestRunSet(suite, { env: 'staging' }, { secretKey: key, keyId: 'k' }));
  const ids = plans.flatMap((plan) => [plan.id, ...plan.runs.map((run) => run.id)]);
  for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(new Set(ids).size, ids.length);
  const setIds = plans.map((plan) => plan.id);
  assert.deepEqual([...setIds].sort(), setIds, 'sets made one after another sort in the order they were made');
  const before = Date.now();
  const at = parseInt(planTestRunSet(suite, { env: 'staging' }, { secretKey: key, keyId: 'k' }).id.replace(/-/g, '').slice(0, 12), 16);
  assert.ok(at >= before && at <= Date.now(), 'the first 48 bits are the creation time in ms');
});
