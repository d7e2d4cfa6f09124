/**
 * The framework versions, proven: for Vitest, Jest, Mocha and Cucumber (an
 * older major and the newest this Node runs), a small suite runs through the
 * real server, one member per case, and its members — names, outcomes, errors,
 * retries, skips — match what the same framework reports when the suite is run
 * directly with its own machine-readable report (JSON; Cucumber's JUnit). Each version is installed from npm once into
 * node_modules/.cache/runset-frameworks; the test skips, saying why, only when
 * the npm registry cannot be reached.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { FRAMEWORK_VERSIONS, frameworkModules, RegistryUnreachable } from '../helpers/framework-versions.js';
import { frameworkCli, frameworkPackage, runDirectly, suiteShape, writeFrameworkSuite, type DirectCase, type FrameworkKind } from './framework-fixtures.js';

interface Member {
  name: string;
  status: string;
  attempts: number;
  error: string | null;
  output: string | null;
  flaky: boolean;
  skipped: boolean;
}

interface Suite {
  kind: FrameworkKind;
  version: string;
  env: string;
  file: string;
}

after(() => assertNoLeakedServers());

const matrix = Object.entries(FRAMEWORK_VERSIONS).flatMap(([kind, versions]) => versions.map((version) => ({ kind: kind as FrameworkKind, version })));

describe('framework versions: members match a direct run', () => {
  const suites: Suite[] = [];
  const direct = new Map<string, Map<string, DirectCase>>();
  const sets = new Map<string, string>();
  let server: RunningServer | undefined;
  let unreachable: string | undefined;

  before(async () => {
    const root = tempDir('runset-frameworks-');
    let installed: string[];
    try {
      installed = await Promise.all(matrix.map(({ kind, version }) => frameworkModules(frameworkPackage(kind), version)));
    } catch (error) {
      if (!(error instanceof RegistryUnreachable)) throw error;
      unreachable = error.message;
      return;
    }
    const entries: string[] = [];
    for (const [i, { kind, version }] of matrix.entries()) {
      const env = `${kind}-${version.replace(/\./g, '-')}`;
      const dir = path.join(root, env);
      const file = writeFrameworkSuite(dir, kind, env, installed[i] as string);
      suites.push({ kind, version, env, file });
      entries.push(`  - { name: "${env}", type: ${kind}, dir: "${env}", environments: ["${env}"] }`);
    }
    const reports = await Promise.all(matrix.map(({ kind }, i) => runDirectly(kind, path.join(root, suites[i]!.env), frameworkCli(kind, installed[i] as string))));
    suites.forEach((s, i) => direct.set(s.env, reports[i] as Map<string, DirectCase>));
    const configPath = path.join(root, 'runset.config.yaml');
    writeFileSync(configPath, `environments:\n${suites.map((s) => `  ${s.env}: { variables: {} }`).join('\n')}\ntests:\n${entries.join('\n')}\n`);
    const started = await startRunset({ configPath, args: ['--workers', '2'] });
    server = started;
    for (const s of suites) {
      const created = await api(started, 'POST', '/v0/test-run-sets', { body: { env: s.env } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      sets.set(s.env, created.body.testRunSetId as string);
    }
  });
  after(async () => {
    await server?.stop();
  });

  for (const { kind, version } of matrix) {
    test(`${kind} ${version}`, async (t) => {
      if (unreachable !== undefined) return t.skip(unreachable);
      const suite = suites.find((s) => s.kind === kind && s.version === version)!;
      const expected = direct.get(suite.env)!;
      const shape = suiteShape(kind);
      assert.equal(expected.size, shape.cases, `the direct run reports the suite's ${shape.cases} cases: ${[...expected.keys()].join(', ')}`);
      const done = await waitForSet(server!, sets.get(suite.env)!, 120_000);
      const members = (await api<{ testRuns: Member[] }>(server!, 'GET', `/v0/test-run-sets/${sets.get(suite.env)!}/test-runs`)).body.testRuns;
      assert.deepEqual(members.map((m) => m.name).sort(), [...expected.keys()].sort(), 'the same cases, named file › describe › title');
      for (const m of members) {
        const want = expected.get(m.name)!;
        const why = `${m.name}: runset ${JSON.stringify(m)} vs direct ${JSON.stringify(want)}`;
        assert.equal(m.status, want.status === 'failed' ? 'FAIL' : 'SUCCESS', why);
        assert.equal(m.skipped, want.status === 'skipped', why);
        // Cucumber's JUnit report gives an undefined step no message: runset's own words are checked below.
        if (want.status === 'failed') assert.ok(m.error && (want.firstLine === null ? kind === 'cucumber' : m.error.includes(want.firstLine.replace(/^Error: /, ''))), why);
        else assert.equal(m.error, null, why);
      }
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
