/**
 * Playwright suites through the real server with the real system Chromium:
 * discovery into members, counts that move live, a failure with its screenshot
 * and trace downloadable (secrets masked in both output and trace), retries and
 * flaky, and a reload that lists the suite again. Skips, saying why, where
 * Chromium is not installed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, waitForSet, type RunningServer } from '../helpers/server.js';
import { entryData, readZip } from '../../src/artifacts/zip.js';
import { chromiumMissing, PW_SECRET, writePlaywrightFixture, type PlaywrightFixture, type PlaywrightMember } from './playwright-fixtures.js';

type Member = PlaywrightMember;

after(() => assertNoLeakedServers());

describe('Playwright tests as Test Runs', { skip: chromiumMissing() }, () => {
  let fixture: PlaywrightFixture;
  let server: RunningServer;
  before(async () => {
    fixture = writePlaywrightFixture(['main', 'flaky', 'live', 'reload']);
    const configPath = path.join(fixture.dir, 'runset.config.yaml');
    writeFileSync(configPath, fixture.config);
    server = await startRunset({ configPath, env: { E2E_PW_SECRET: PW_SECRET }, args: ['--workers', '4'] });
  });
  after(async () => {
    await server?.stop();
    assert.ok(!server.logs().includes(PW_SECRET), 'the secret never appears in logs');
  });

  const create = async (env: string) => (await api(server, 'POST', '/v0/test-run-sets', { body: { env } })).body.testRunSetId as string;
  const members = async (id: string) => (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;

  test('each test case is one member, named file › describe › title; failures come with screenshot and trace', async () => {
    const id = await create('main');
    assert.deepEqual((await members(id)).map((m) => m.name), [
      'basic.spec.ts › shop › home shows a title @main',
      'basic.spec.ts › shop › sign in fails @main',
      'basic.spec.ts › needs no browser @main',
    ]);
    const done = await waitForSet(server, id, 60_000);
    assert.equal(done.status, 'FAIL');
    assert.deepEqual(done.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 2, FAIL: 1 });
    const failed = (await members(id)).find((m) => m.status === 'FAIL')!;
    assert.match(failed.error ?? '', /toHaveText/);
    assert.match(failed.output ?? '', /typed the token \*\*\*/);
    assert.ok(!(failed.output ?? '').includes(PW_SECRET), 'secret masked in output');
    const names = failed.artifacts.map((a) => a.name);
    assert.ok(names.includes('screenshot.png') && names.includes('trace.zip'), names.join(', '));

    const shot = failed.artifacts.find((a) => a.name === 'screenshot.png')!;
    const png = await download(shot.url);
    assert.equal(png.type, 'image/png');
    assert.equal(png.bytes.length, shot.size);
    assert.equal(png.bytes.subarray(1, 4).toString(), 'PNG');

    const trace = await download(failed.artifacts.find((a) => a.name === 'trace.zip')!.url);
    assert.equal(trace.type, 'application/zip');
    const texts = readZip(trace.bytes).map((e) => entryData(e).toString('latin1'));
    assert.ok(texts.some((t) => t.includes('"fill"')), 'the trace records the fill');
    assert.ok(!texts.some((t) => t.includes(PW_SECRET)), 'the typed secret is masked in the trace');
    assert.ok(texts.some((t) => t.includes('***')));
    const unauthenticated = await fetch(server.url.replace(/\/api$/, '') + shot.url);
    assert.equal(unauthenticated.status, 401, 'behind the same key check');
  });

  test('retries are counted, and a case that passed after one is flaky, its failed attempt traced', async () => {
    const id = await create('flaky');
    assert.equal((await waitForSet(server, id, 60_000)).status, 'SUCCESS');
    const [member] = await members(id);
    assert.equal(member?.attempts, 2);
    assert.equal(member?.flaky, true);
    assert.ok(member?.artifacts.some((a) => a.name === 'trace.zip'), 'the failed attempt\'s trace is kept');
  });

  test('counts move live: WAITING → RUNNING → SUCCESS as each case begins and ends', async () => {
    const id = await create('live');
    const seen = await pollUntil(async () => {
      const s = await api<{ status: string; progress: { counts: Record<string, number> } }>(server, 'GET', `/v0/test-run-sets/${id}`);
      return s.body.progress.counts.RUNNING === 1 && s.body.progress.counts.WAITING === 1 ? s.body : undefined;
    }, 30_000);
    assert.equal(seen.status, 'RUNNING', 'one case runs while its batch-mate still waits');
    writeFileSync(fixture.releaseFile, 'go');
    const done = await waitForSet(server, id, 60_000);
    assert.deepEqual(done.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 2, FAIL: 0 });
  });

  test('a reload lists the suite again: a new test case becomes a member of new sets', async () => {
    const before = await create('reload');
    assert.equal((await members(before)).length, 1);
    writeFileSync(path.join(fixture.suiteDir, 'tests', 'added.spec.ts'), "import { test } from '@playwright/test';\ntest('added later @reload', async () => {});\n");
    server.proc.kill('SIGHUP');
    // The reload lists the suite with Playwright again (seconds on a loaded machine); the
    // old config serves meanwhile. Watch the environment's test count, then create one set.
    const testsIn = async (env: string) =>
      (await api<{ environments: Array<{ name: string; tests: number }> }>(server, 'GET', '/v0/environments')).body.environments.find((e) => e.name === env)?.tests;
    await pollUntil(async () => ((await testsIn('reload')) === 2 ? true : undefined), 60_000);
    const reloaded = await create('reload');
    assert.deepEqual((await members(reloaded)).map((m) => m.name), ['added.spec.ts › added later @reload', 'reload.spec.ts › listed at start @reload']);
  });

  async function download(url: string): Promise<{ type: string; bytes: Buffer }> {
    const res = await fetch(server.url.replace(/\/api$/, '') + url, { headers: { authorization: `Bearer ${server.apiKey}` } });
    assert.equal(res.status, 200);
    return { type: res.headers.get('content-type') ?? '', bytes: Buffer.from(await res.arrayBuffer()) };
  }
});

async function pollUntil<T>(check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs}ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
