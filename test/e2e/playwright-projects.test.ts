/**
 * Suites with several Playwright projects, on the oldest and newest versions: a
 * `setup` project and two projects that depend on it (as in Playwright's
 * starter config), run through the real server as one entry with every project
 * and as an entry with `project: alpha`. Members — names, outcomes, errors,
 * retries — match what that Playwright reports when run directly (with
 * `--project alpha` for the second), and all projects of an entry run in one
 * Playwright process: setup runs once, before the tests that depend on it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { bundledVersion, OLDEST_SUPPORTED, playwrightModules } from '../helpers/playwright-versions.js';
import type { PlaywrightMember } from './playwright-fixtures.js';
import { eachAtMost, runDirectly, writeProjectsSuite, type DirectCase } from './playwright-compat-fixtures.js';

/** The oldest supported, the oldest with project dependencies (1.31+), runset's own: the --project=<name> path and the --test-list one. */
const VERSIONS = [OLDEST_SUPPORTED, '1.33.0', bundledVersion()];

interface Suite {
  env: string;
  dir: string;
  expected: Map<string, DirectCase>;
  /** Its set, created with the others so the server's two slots run two at a time. */
  setId?: string;
}

after(() => assertNoLeakedServers());

/** The runner processes that ran the setup project in `dir` (it leaves one file per runner). */
function setupRunners(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.startsWith('prepared-'));
}

function clearSetupRunners(dir: string): void {
  for (const f of setupRunners(dir)) rmSync(path.join(dir, f));
}

describe('Playwright projects and a setup dependency: members match a direct run', () => {
  const suites = new Map<string, Suite>();
  let server: RunningServer;

  before(async () => {
    const root = tempDir('runset-pw-projects-');
    const entries: string[] = [];
    const direct: Array<() => Promise<void>> = [];
    for (const version of VERSIONS) {
      const modules = playwrightModules(version);
      const cli = path.join(modules, '@playwright', 'test', 'cli.js');
      for (const only of [undefined, 'alpha']) {
        const env = `${only ?? 'all'}-${version.replace(/\./g, '-')}`;
        const dir = path.join(root, env);
        writeProjectsSuite(dir, `p${env}`, modules);
        direct.push(async () => {
          const expected = await runDirectly(dir, cli, only ? ['--project', only] : []);
          clearSetupRunners(dir);
          suites.set(`${version} ${only ?? 'all'}`, { env, dir, expected });
        });
        entries.push(`  - { name: "${env}", type: playwright, dir: "${env}", environments: ["${env}"], workers: 2${only ? `, project: ${only}` : ''} }`);
      }
    }
    await eachAtMost(direct, 2, (run) => run());
    const envs = [...suites.values()].map((s) => `  ${s.env}: { variables: {} }`);
    const configPath = path.join(root, 'runset.config.yaml');
    writeFileSync(configPath, `environments:\n${envs.join('\n')}\ntests:\n${entries.join('\n')}\n`);
    // The suites never open a browser: any executable passes runset's browser check.
    server = await startRunset({ configPath, env: { RUNSET_CHROMIUM: process.execPath }, args: ['--workers', '2'] });
    for (const suite of suites.values()) {
      const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: suite.env } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      suite.setId = created.body.testRunSetId as string;
    }
  });
  after(async () => {
    await server?.stop();
  });

  for (const version of VERSIONS) {
    for (const only of [undefined, 'alpha']) {
      test(`@playwright/test ${version}, ${only ? `an entry with project: ${only}` : 'every project'}`, async () => {
        const suite = suites.get(`${version} ${only ?? 'all'}`)!;
        const id = suite.setId!;
        await waitForSet(server, id, 240_000);
        const members = (await api<{ testRuns: PlaywrightMember[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
        assert.deepEqual(members.map((m) => m.name).sort(), [...suite.expected.keys()].sort(), 'the same cases, named [project] › file › title');
        for (const m of members) {
          const want = suite.expected.get(m.name)!;
          const why = `${m.name}: runset ${JSON.stringify(m)} vs direct ${JSON.stringify(want)}`;
          assert.equal(m.status, want.status === 'unexpected' ? 'FAIL' : 'SUCCESS', why);
          assert.equal(m.attempts, want.attempts, why);
          if (want.status === 'unexpected') assert.ok(want.error && m.error?.includes(want.error), why);
          else assert.equal(m.error, null, why);
        }
        const withSetup = !only || version !== OLDEST_SUPPORTED; // project dependencies came in 1.31
        assert.equal(members.some((m) => m.name.startsWith('[setup]')), withSetup, 'an entry with a project lists the setup it depends on');
        assert.equal(setupRunners(suite.dir).length, withSetup ? 1 : 0, 'every project of the entry in one Playwright process: setup ran once');
      });
    }
  }
});
