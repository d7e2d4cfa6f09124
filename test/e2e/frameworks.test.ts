/**
 * The framework versions, proven: for Vitest, Jest, Mocha, Cucumber and Newman (an
 * older major and the newest this Node runs) and Debian's pytest, a small suite runs through the
 * real server, one member per case, and its members — names, outcomes, errors,
 * retries, skips — match what the same framework reports when the suite is run
 * directly with its own machine-readable report (JSON; Cucumber's JUnit). Each version is installed from npm once into
 * node_modules/.cache/runset-frameworks, and its direct report on the suite is kept there too
 * (../helpers/direct-reports.ts: made again whenever the version, the suite or its fixture code changes);
 * the test skips, saying why, only when the npm registry cannot be reached.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { directReport } from '../helpers/direct-reports.js';
import { FRAMEWORK_VERSIONS, installAll, NEWMAN_VERSIONS } from '../helpers/framework-versions.js';
import { frameworkCli, frameworkPackage, runDirectly, suiteShape, writeFrameworkSuite, type DirectCase, type FrameworkKind } from './framework-fixtures.js';
import { COLLECTION_FILE, newmanNames, runNewmanDirectly, startApi, writeNewmanSuite } from './framework-fixtures-newman.js';
import type { PlaywrightMember } from './playwright-fixtures.js';
import { PYTHON, pytestNames, pytestVersion, runPytestDirectly, writePytestSuite } from './framework-fixtures-pytest.js';

/** A member as the members list gives it: the Playwright one's fields this test reads, and the skip mark. */
type Member = Pick<PlaywrightMember, 'name' | 'status' | 'attempts' | 'error' | 'output' | 'flaky'> & { skipped: boolean };

interface Suite {
  kind: FrameworkKind;
  version: string;
  env: string;
  file: string;
}

/** The members are the directly run cases, by name, with the same outcome, skip and first line of error. */
function assertSameCases(members: readonly Member[], expected: ReadonlyMap<string, DirectCase>, messageless = false): void {
  assert.deepEqual(members.map((m) => m.name).sort(), [...expected.keys()].sort(), 'the same cases, named as the framework names them');
  for (const m of members) {
    const want = expected.get(m.name)!;
    const why = `${m.name}: runset ${JSON.stringify(m)} vs direct ${JSON.stringify(want)}`;
    assert.equal(m.status, want.status === 'failed' ? 'FAIL' : 'SUCCESS', why);
    assert.equal(m.skipped, want.status === 'skipped', why);
    // Cucumber's JUnit report gives an undefined step no message (`messageless`): runset's own words are checked by its test.
    if (want.status === 'failed') assert.ok(m.error && (want.firstLine === null ? messageless : m.error.includes(want.firstLine.replace(/^Error: /, ''))), why);
    else assert.equal(m.error, null, why);
  }
}

const matrix = Object.entries(FRAMEWORK_VERSIONS).flatMap(([kind, versions]) => versions.map((version) => ({ kind: kind as FrameworkKind, version })));
const pytest = pytestVersion();
const envOf = (kind: string, version: string) => `${kind}-${version.replace(/\./g, '-')}`;

/**
 * Every suite of this file through one server (a server start and its listings
 * are CPU the machine shares with other test files): a set per suite, each
 * created at once, so the sets run while the first tests wait for theirs.
 */
const suites: Suite[] = [];
const direct = new Map<string, Map<string, DirectCase>>();
const sets = new Map<string, string>();
let server: RunningServer | undefined;
let shop: Awaited<ReturnType<typeof startApi>> | undefined;
let unreachable: string | undefined;

before(async () => {
  const root = tempDir('runset-frameworks-');
  const installed = await installAll([...matrix.map(({ kind, version }) => [frameworkPackage(kind), version] as const), ...NEWMAN_VERSIONS.map((version) => ['newman', version] as const)]);
  if (!Array.isArray(installed)) {
    unreachable = installed.unreachable;
    return;
  }
  shop = await startApi();
  const entries: string[] = [];
  const environments: string[] = [];
  for (const [i, { kind, version }] of matrix.entries()) {
    const env = envOf(kind, version);
    const file = writeFrameworkSuite(path.join(root, env), kind, env, installed[i] as string);
    suites.push({ kind, version, env, file });
    entries.push(`  - { name: "${env}", type: ${kind}, dir: "${env}", environments: ["${env}"] }`);
    environments.push(`  ${env}: { variables: {} }`);
  }
  const reports = await Promise.all(matrix.map(({ kind, version }, i) => {
    const dir = path.join(root, suites[i]!.env);
    return directReport(`${frameworkPackage(kind)}@${version}`, dir, () => runDirectly(kind, dir, frameworkCli(kind, installed[i] as string)));
  }));
  suites.forEach((s, i) => direct.set(s.env, reports[i] as Map<string, DirectCase>));
  // pytest's entry sets `retries: 1` (pytest-rerunfailures' --reruns, the failure rerun too).
  if ('version' in pytest) {
    const env = envOf('pytest', pytest.version);
    const dir = path.join(root, env);
    writePytestSuite(dir, env);
    direct.set(env, await runPytestDirectly(dir));
    entries.push(`  - { name: "${env}", type: pytest, dir: "${env}", python: "${PYTHON}", retries: 1, environments: ["${env}"] }`);
    environments.push(`  ${env}: { variables: { BASE_URL: "${shop.url}" } }`);
  }
  for (const [i, version] of NEWMAN_VERSIONS.entries()) {
    const env = envOf('newman', version);
    const dir = path.join(root, env);
    const modules = installed[matrix.length + i] as string;
    writeNewmanSuite(dir, env, modules);
    direct.set(env, await directReport(`newman@${version}`, dir, () => runNewmanDirectly(dir, modules, shop!.url)));
    entries.push(`  - { name: "${env}", type: newman, dir: "${env}", collection: "${COLLECTION_FILE}", environments: ["${env}"] }`);
    environments.push(`  ${env}: { variables: { BASE_URL: "${shop.url}" } }`);
  }
  const configPath = path.join(root, 'runset.config.yaml');
  writeFileSync(configPath, `environments:\n${environments.join('\n')}\ntests:\n${entries.join('\n')}\n`);
  const started = await startRunset({ configPath, args: ['--workers', '2'] });
  server = started;
  for (const env of direct.keys()) {
    const created = await api(started, 'POST', '/v0/test-run-sets', { body: { env } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    sets.set(env, created.body.testRunSetId as string);
  }
});
after(async () => {
  await server?.stop();
  await new Promise((resolve) => (shop ? shop.server.close(resolve) : resolve(undefined)));
  assertNoLeakedServers();
});

describe('framework versions: members match a direct run', () => {
  for (const { kind, version } of matrix) {
    test(`${kind} ${version}`, async (t) => {
      if (unreachable !== undefined) return t.skip(unreachable);
      const suite = suites.find((s) => s.kind === kind && s.version === version)!;
      const expected = direct.get(suite.env)!;
      const shape = suiteShape(kind);
      assert.equal(expected.size, shape.cases, `the direct run reports the suite's ${shape.cases} cases: ${[...expected.keys()].join(', ')}`);
      const done = await waitForSet(server!, sets.get(suite.env)!, 120_000);
      const members = (await api<{ testRuns: Member[] }>(server!, 'GET', `/v0/test-run-sets/${sets.get(suite.env)!}/test-runs`)).body.testRuns;
      assertSameCases(members, expected, kind === 'cucumber');
      const byTitle = (title: string) => members.find((m) => m.name.endsWith(`group › ${title}`))!;
      assert.equal(byTitle('passes on retry').attempts, 2, 'its retry is counted');
      assert.equal(byTitle('passes on retry').flaky, true, 'a pass after a failed attempt is flaky');
      assert.equal(byTitle('passes').attempts, 1);
      assert.equal(byTitle('fails').attempts, kind === 'jest' ? 2 : 1, 'jest.retryTimes(1) retries the failure too');
      assert.equal(done.status, 'FAIL');
      assert.deepEqual(done.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: shape.cases - shape.failed, FAIL: shape.failed });
      if (kind === 'cucumber') assert.equal(byTitle('undefined step').error, 'Undefined step: Given a step nobody defined', 'an undefined step fails, named');
    });
  }
});

/**
 * pytest (Debian's, by an explicit interpreter) and Newman (two majors), the
 * same way, compared with the direct run. Newman has no retries, and its
 * failures are a failed test script and a request that cannot be sent.
 */
describe('pytest and Newman: members match a direct run', () => {
  test('pytest (Debian python3-pytest)', async (t) => {
    if ('missing' in pytest) return t.skip(pytest.missing);
    if (unreachable !== undefined) return t.skip(unreachable);
    const env = envOf('pytest', pytest.version);
    const members = await finishedMembers(server!, sets.get(env)!, direct.get(env)!, 8, { SUCCESS: 7, FAIL: 1 });
    const file = `test_${env.replace(/\W/g, '_')}.py`;
    const named = (name: string) => members.find((m) => m.name === name)!;
    const roles = pytestNames(file);
    assert.equal(named(roles.retried).attempts, 2, 'its rerun is counted (pytest-rerunfailures, read by runset\'s plugin)');
    assert.equal(named(roles.retried).flaky, true, 'a pass after a failed attempt is flaky');
    assert.equal(named(roles.passes).attempts, 1);
    assert.equal(named(roles.fails).attempts, 2, '--reruns 1 reruns the failure too');
    assert.equal(named(`${file}::test_param[a b]`).status, 'SUCCESS', 'a parametrized case is its own member, named by node id');
  });

  for (const version of NEWMAN_VERSIONS) {
    test(`newman ${version}`, async (t) => {
      if (unreachable !== undefined) return t.skip(unreachable);
      const env = envOf('newman', version);
      const members = await finishedMembers(server!, sets.get(env)!, direct.get(env)!, 5, { SUCCESS: 3, FAIL: 2 });
      const roles = newmanNames(env);
      assert.match(members.find((m) => m.name === roles.fails)!.error ?? '', /status is 200: AssertionError: expected response to have status code 200 but got 500/);
      for (const m of members.filter((m) => !m.skipped)) assert.equal(m.attempts, 1, `${m.name}: Newman has no retries`);
    });
  }
});

/** The set's members once it is done, checked against the direct run: `cases` of them, with these counts. */
async function finishedMembers(server: RunningServer, set: string, expected: Map<string, DirectCase>, cases: number, counts: { SUCCESS: number; FAIL: number }): Promise<Member[]> {
  assert.equal(expected.size, cases, `the direct run reports the suite's ${cases} cases: ${[...expected.keys()].join(', ')}`);
  const done = await waitForSet(server, set, 120_000);
  const members = (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${set}/test-runs`)).body.testRuns;
  assertSameCases(members, expected);
  assert.equal(done.status, 'FAIL');
  assert.deepEqual(done.progress.counts, { WAITING: 0, RUNNING: 0, ...counts });
  return members;
}
