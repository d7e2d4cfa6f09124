/**
 * When a Playwright suite goes wrong: a test that hangs where Playwright's own
 * timeout cannot reach it is killed with its browsers (its batch-mates run
 * again); a missing browser is a clear error on the member, not a hang; a suite
 * that cannot be listed stops `serve` with a config error naming the entry.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, CLI, pidAlive, startRunset, waitForSet } from '../helpers/server.js';
import { chromiumMissing, writePlaywrightFixture } from './playwright-fixtures.js';

after(() => assertNoLeakedServers());

interface Member {
  name: string;
  status: string;
  error: string | null;
  workerId: string | null;
  startedAt: string | null;
  endedAt: string | null;
}

/** Live processes whose command line holds `marker` (zombies are already dead). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${entry}/stat`, 'utf8'))) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // ended while we looked
    }
  }
  return found;
}


test('a hung test is killed by the hang guard with its browsers; its batch-mate runs again and passes', { skip: chromiumMissing() }, async () => {
  const fixture = writePlaywrightFixture(['hang']);
  const configPath = path.join(fixture.dir, 'runset.config.yaml');
  writeFileSync(configPath, fixture.config);
  const server = await startRunset({ configPath, env: { E2E_PW_SECRET: 'x' } });
  try {
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'hang' } });
    const id = created.body.testRunSetId as string;
    const done = await waitForSet(server, id, 90_000);
    assert.equal(done.status, 'FAIL');
    assert.deepEqual(done.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 1 });
    const runs = (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
    const hung = runs.find((r) => r.name.includes('blocks forever'));
    // 3 s, not 1: Playwright's timeout covers fixture setup, and a browser launch on a loaded machine can take over a second.
    const guard = /^hung: runset's hang guard killed Playwright and its browsers (\d+)s after the test began, past its timeout of 3s/.exec(hung?.error ?? '');
    assert.ok(guard, hung?.error ?? 'no error');
    // The guard acts at 2 × 3 s + 10 s; it says when it did (a loaded machine delays its timer a little, never by minutes).
    assert.ok(Number(guard[1]) >= 16 && Number(guard[1]) < 60, `killed ${guard[1]}s after the test began, not left hanging`);
    assert.equal(runs.find((r) => r.name.includes('waits its turn'))?.status, 'SUCCESS');
    const worker = Number(readFileSync(fixture.pidFile, 'utf8'));
    assert.equal(pidAlive(worker), false, 'the Playwright worker is gone');
    await waitFor(() => processesWith(fixture.marker).length === 0, 5000, () => `browsers left: ${processesWith(fixture.marker).join(', ')}`);
  } finally {
    await server.stop();
  }
});

test('a missing browser fails the members at once with a clear error', async () => {
  const fixture = writePlaywrightFixture(['flaky']);
  const configPath = path.join(fixture.dir, 'runset.config.yaml');
  writeFileSync(configPath, fixture.config);
  const server = await startRunset({ configPath, env: { E2E_PW_SECRET: 'x', RUNSET_CHROMIUM: path.join(fixture.dir, 'no-such-chromium') } });
  try {
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'flaky' } });
    const id = created.body.testRunSetId as string;
    const done = await waitForSet(server, id, 15_000);
    assert.equal(done.status, 'FAIL');
    const [member] = (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
    assert.equal(member?.error, `Chromium not found at ${path.join(fixture.dir, 'no-such-chromium')}; install Debian's chromium package, or set RUNSET_CHROMIUM to a Chromium executable`);
    assert.ok(member?.workerId, 'the worker that took it');
    assert.ok(Date.parse(member.startedAt!) <= Date.parse(member.endedAt!), `started ${member.startedAt}, ended ${member.endedAt}`);
  } finally {
    await server.stop();
  }
});

test('a suite that cannot be listed stops serve with a config error naming the entry', () => {
  const fixture = writePlaywrightFixture(['reload']);
  writeFileSync(path.join(fixture.suiteDir, 'tests', 'broken.spec.ts'), "import { test } from '@playwright/test';\ntest('x', async () => {\n");
  const configPath = path.join(fixture.dir, 'runset.config.yaml');
  writeFileSync(configPath, fixture.config);
  const res = spawnSync(process.execPath, [CLI, 'serve', '--port', '0', '--config', configPath, '--data-dir', path.join(fixture.dir, 'data')], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, E2E_PW_SECRET: 'x' },
  });
  assert.equal(res.status, 2, res.stderr);
  assert.match(res.stderr, /runset\.config\.yaml: tests\[\d\]: Playwright suite "\w+" \(.*suite\): cannot be listed: .*broken\.spec\.ts/);
  assert.ok(!existsSync(path.join(fixture.dir, 'data', 'runset.db.lock')), 'nothing left holding the data dir');
});

async function waitFor(check: () => boolean, timeoutMs: number, describe: () => string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(describe());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
