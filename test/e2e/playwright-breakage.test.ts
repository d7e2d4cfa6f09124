/**
 * When Playwright itself fails — its config throws, globalSetup throws, the
 * webServer does not start, the runner crashes mid-batch — every member says
 * so in Playwright's own words (first lines in `error`, the tail in `output`),
 * secrets masked; a listing that fails is a config error with Playwright's own
 * message; and a working webServer starts once per batch and is gone after it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, CLI, pidAlive, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { bundledVersion, OLDEST_SUPPORTED, playwrightModules } from '../helpers/playwright-versions.js';
import { BREAK_SECRET, BREAKAGES, writeBreakableSuite, type BreakableSuite } from './playwright-breakage-fixtures.js';
import type { PlaywrightMember } from './playwright-fixtures.js';

after(() => assertNoLeakedServers());

// The oldest supported, the one that re-launches itself for an ES module config, and runset's own.
const VERSIONS = [OLDEST_SUPPORTED, '1.33.0', bundledVersion()];

/**
 * One server for every version: each version's suite is an entry of its own
 * environments, and every set (each breakage and `ok`, for each version) is
 * created at once, so the server's two slots run them two at a time while the
 * tests below wait for theirs in turn (each environment has its own port and
 * server log, so sets running at once never meet).
 */
describe('Playwright failing outside a test', () => {
  let root: string;
  let server: RunningServer;
  const suites = new Map<string, BreakableSuite>();
  const sets = new Map<string, string>();
  before(async () => {
    root = tempDir('runset-pw-break-');
    for (const version of VERSIONS) suites.set(version, await writeBreakableSuite(root, `v${version.replace(/\./g, '-')}`, playwrightModules(version)));
    const configPath = path.join(root, 'runset.config.yaml');
    const all = [...suites.values()];
    writeFileSync(configPath, `environments:\n${all.flatMap((s) => s.environments).join('\n')}\ntests:\n${all.map((s) => s.entry).join('\n')}\n`);
    // Browser-free suite: any executable passes runset's browser check.
    server = await startRunset({ configPath, env: { BREAK_TOKEN: BREAK_SECRET, RUNSET_CHROMIUM: process.execPath }, args: ['--workers', '2'] });
    for (const [version, suite] of suites) {
      for (const name of [...BREAKAGES, 'ok']) {
        const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: suite.env(name) } });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        sets.set(`${version} ${name}`, created.body.testRunSetId as string);
      }
    }
  });
  after(async () => {
    await server?.stop();
    assert.ok(!server.logs().includes(BREAK_SECRET), 'the secret never appears in logs');
  });

  for (const version of VERSIONS) describe(`Playwright ${version}`, () => {
    async function runSet(env: string): Promise<PlaywrightMember[]> {
      const id = sets.get(`${version} ${env}`)!;
      // Every set was queued at once: this one may wait for the others' turns first.
      const done = await waitForSet(server, id, 300_000);
      const members = (await api<{ testRuns: PlaywrightMember[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
      assert.equal(members.length, 3);
      for (const m of members) {
        assert.ok(!JSON.stringify(m).includes(BREAK_SECRET), `secret masked in ${m.name}`);
      }
      if (env !== 'ok') assert.equal(done.status, 'FAIL');
      return members;
    }

    const cases: Array<[string, RegExp, RegExp]> = [
      ['config', /^Playwright exited with code 1 before running this test: .*the config refuses to load with token \*\*\*/, /the config refuses to load/],
      ['setup', /^Playwright exited with code 1 before running this test: .*global setup cannot reach the database with token \*\*\*/, /at globalSetup|global-setup\.ts/],
      ['server', /^Playwright exited with code 1 before running this test: .*config\.webServer was not able to start/, /web server cannot open its database with token \*\*\*/],
    ];
    for (const [env, error, output] of cases) {
      test(`${env}: every member carries Playwright's own error, its output the tail`, async () => {
        for (const m of await runSet(env)) {
          assert.equal(m.status, 'FAIL');
          assert.match(m.error ?? '', error, m.name);
          assert.match(m.output ?? '', output, m.name);
          assert.ok(!(m.output ?? '').includes('\u001b'), `${m.name}: no terminal colours in output`);
          assert.equal(m.attempts, 0);
          // Never begun, but a worker took it and Playwright tried: that worker, and a start before the end.
          assert.ok(m.workerId, `${m.name}: the worker that tried it`);
          assert.ok(Date.parse(m.startedAt!) < Date.parse(m.endedAt!), `${m.name}: started ${m.startedAt}, ended ${m.endedAt}`);
        }
      });
    }

    async function assertServersGone(env: string): Promise<void> {
      const pids = readFileSync(suites.get(version)!.serverLog(env), 'utf8').trim().split('\n').filter(Boolean).map(Number);
      const until = Date.now() + 5000;
      while (pids.some(pidAlive) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(pids.filter(pidAlive), [], 'no web server outlives its batch');
    }

    test('crash: the runner dies mid-batch; the running member and those after it say how, in its words', async () => {
      const members = await runSet('crash');
      await assertServersGone('crash');
      const running = members.find((m) => m.name.endsWith('the web server answers'))!;
      assert.match(running.error ?? '', /^Playwright exited with code 1 while this test was running: .*the runner crashed with token \*\*\*/);
      for (const m of members.filter((x) => x !== running)) {
        assert.equal(m.status, 'FAIL');
        assert.match(m.error ?? '', /^Playwright exited with code 1 before running this test: .*the runner crashed with token \*\*\*/, m.name);
      }
    });

    test('kill: a runner killed outright takes its webServer along; every member says the run was cut short', async () => {
      const members = await runSet('kill');
      await assertServersGone('kill');
      const running = members.find((m) => m.name.endsWith('the web server answers'))!;
      assert.match(running.error ?? '', /^Playwright (was killed by SIGKILL|exited with code \d+) while this test was running/);
      for (const m of members.filter((x) => x !== running)) assert.match(m.error ?? '', /^Playwright (was killed by SIGKILL|exited with code \d+) before running this test/, m.name);
    });

    test('webServer: started once for the batch, answering every test, stopped with the batch', async () => {
      const members = await runSet('ok');
      assert.deepEqual(members.map((m) => [m.name, m.status]), [
        ['served.spec.ts › the web server answers', 'SUCCESS'],
        ['served.spec.ts › it answers again', 'SUCCESS'],
        ['served.spec.ts › more › and a third time', 'SUCCESS'],
      ]);
      assert.equal(readFileSync(suites.get(version)!.serverLog('ok'), 'utf8').trim().split('\n').length, 1, 'one web server for the whole batch');
      await assertServersGone('ok');
    });

    test('a config that cannot load stops serve with a config error in Playwright\'s own words', () => {
      // A config of this version's suite alone: serve stops at the first entry it cannot list.
      const tag = `v${version.replace(/\./g, '-')}`;
      const configPath = path.join(root, `${tag}.config.yaml`);
      writeFileSync(configPath, suites.get(version)!.config);
      const dataDir = path.join(root, `${tag}-data-list`);
      const res = spawnSync(process.execPath, [CLI, 'serve', '--port', '0', '--config', configPath, '--data-dir', dataDir], {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, BREAK: 'config', BREAK_TOKEN: BREAK_SECRET },
      });
      assert.equal(res.status, 2, res.stderr);
      assert.match(res.stderr, new RegExp(`tests\\[0\\]: Playwright suite "breakable" \\(.*${tag}\\): cannot be listed: .*the config refuses to load with token`));
      assert.ok(!existsSync(path.join(dataDir, 'runset.db.lock')), 'nothing left holding the data dir');
    });
  });
});
