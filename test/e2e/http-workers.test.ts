/**
 * Workers over HTTP, end to end on real processes: `runset serve --no-workers`
 * on each store, and `runset worker --url` processes that hold a worker key and
 * nothing else (no database URL, no secret key, no config). Members spread over
 * two workers, commands and a Playwright suite alike; secrets arrive opened and
 * leave masked; a SIGKILLed worker loses nothing; a finish under a lease that
 * moved answers 409 and changes nothing; a cancel reaches a worker within 2 s;
 * --set and --exit-when-idle; a worker key is refused outside the protocol.
 */
import { after, before, describe, test } from 'node:test';
import { OLDEST_WORKER_PROTOCOL, WORKER_PROTOCOL, WORKER_PROTOCOL_HEADER } from '../../src/core/wire-worker.js';
import { VERSION } from '../../src/core/version.js';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, CLI, pidAlive, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { dropSchemas, newSchemaName, NO_DATABASE, TEST_DATABASE_URL } from '../helpers/postgres.js';

const SECRET = `hw-secret-${process.pid}-${Date.now()}`;

interface Member {
  id: string;
  name: string;
  status: string;
  error: string | null;
  output: string | null;
  workerId: string | null;
  skipped: boolean;
}

/**
 * A suite folder with two quick Playwright tests and a skipped one, and a config of commands beside it (the suite's
 * `dir` is relative to it). Browser-free: what these tests prove of a Playwright batch (it is claimed, run and
 * finished over the worker protocol, its skipped mark crosses the wire) needs no page, and a Chromium start per
 * store cost seconds of CPU.
 */
function fixture(): { configPath: string; dir: string } {
  const dir = tempDir('runset-hw-');
  mkdirSync(path.join(dir, 'suite', 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'suite', 'playwright.config.js'), "module.exports = { testDir: 'tests', timeout: 15_000 };\n");
  // 'gift card' is declared skipped (test['skip'] is Playwright's test.skip) so the skipped mark is checked over the worker wire.
  writeFileSync(path.join(dir, 'suite', 'tests', 'shop.spec.js'), `
const { test, expect } = require('@playwright/test');
test('title', async () => { expect('<h1>Shop</h1>').toContain('Shop'); });
test('cart', async () => { expect(1 + 1).toBe(2); });
test['skip']('gift card', async () => {});
`);
  // "gated" runs until the file GATE names exists, writing its pid first (the cancel and kill tests watch it).
  const gated = "require('fs').writeFileSync(process.env.GATE + '.' + process.pid, ''); const t = setInterval(() => { if (require('fs').existsSync(process.env.GATE)) clearInterval(t) }, 20)";
  const config = `
environments:
  staging:
    variables:
      GATE: { value: "${path.join(dir, 'open')}", allow: ["${dir}/*"] }
      TOKEN: \${env:HW_SECRET}
tests:
${[1, 2, 3, 4].map((i) => `  - { name: cmd ${i}, type: command, run: [node, -e, "setTimeout(() => console.log('token ' + process.env.TOKEN), 200)"] }`).join('\n')}
  - { name: gated, type: command, run: [node, -e, "${gated.replace(/"/g, '\\"')}"] }
  - { name: shop, type: playwright, dir: suite, workers: 1 }
`;
  writeFileSync(path.join(dir, 'runset.config.yaml'), config);
  return { configPath: path.join(dir, 'runset.config.yaml'), dir };
}

interface HttpWorker {
  proc: ChildProcess;
  id: Promise<string>;
  exited: Promise<number | null>;
  log: () => string;
}

const workers = new Set<ChildProcess>();

/** `runset worker --url` with a worker key and no RUNSET_* of the server's (no database URL, no secret key). */
function startWorker(server: RunningServer, key: string, args: string[] = []): HttpWorker {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNSET_') && k !== 'HW_SECRET'));
  const proc = spawn(process.execPath, [CLI, 'worker', '--url', server.url, '--workers', '2', '--lease', '2s', '--grace', '1s', '--log-level', 'warn', ...args], {
    env: { ...env, RUNSET_API_KEY: key },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  workers.add(proc);
  let log = '';
  proc.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => (workers.delete(proc), resolve(code))));
  const id = new Promise<string>((resolve, reject) => {
    proc.stderr.on('data', () => {
      const m = /runset: worker (\S+) with/.exec(log);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`worker exited with ${code} before it started:\n${log}`)));
  });
  return { proc, id, exited, log: () => log };
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function members(server: RunningServer, setId: string): Promise<Member[]> {
  return (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${setId}/test-runs`)).body.testRuns;
}

/** Commands only: the sets that prove what a Playwright batch need not be part of spare a Playwright start. */
const COMMANDS_ONLY = { grepInvert: '^shop\\.spec' };

async function createSet(server: RunningServer, gate: string, select?: typeof COMMANDS_ONLY): Promise<string> {
  const res = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', envOverride: { GATE: gate }, ...(select ? { select } : {}) } });
  assert.equal(res.status, 200, res.text);
  return res.body.testRunSetId as string;
}

/** The pids the gated member of a set wrote, one per run of it (the first once it runs). */
function gatedPids(gate: string, dir: string): number[] {
  const name = `${path.basename(gate)}.`;
  return readdirSync(dir).filter((f) => f.startsWith(name)).map((f) => Number(f.slice(name.length)));
}

after(() => {
  for (const proc of workers) proc.kill('SIGKILL');
  assertNoLeakedServers();
});

for (const store of ['sqlite', 'postgres'] as const) {
  describe(`workers over HTTP on ${store}`, { skip: store === 'postgres' && !TEST_DATABASE_URL ? NO_DATABASE : undefined }, () => {
    const schema = newSchemaName('runset_hw');
    let server: RunningServer;
    let dir: string;
    let workerKey: string;
    let triggerKey: string;

    before(async () => {
      const made = fixture();
      dir = made.dir;
      const args = ['--no-workers', '--poll', '300ms', ...(store === 'postgres' ? ['--database-url', TEST_DATABASE_URL!, '--database-schema', schema] : [])];
      server = await startRunset({ configPath: made.configPath, args, env: { HW_SECRET: SECRET } });
      const key = async (role: string) => {
        const res = await api<{ token: string }>(server, 'POST', '/v0/keys', { body: { name: `hw ${role}`, role } });
        assert.equal(res.status, 201, res.text);
        return res.body.token;
      };
      workerKey = await key('worker');
      triggerKey = await key('trigger');
    });
    after(async () => {
      await server?.stop();
      if (store === 'postgres') await dropSchemas(TEST_DATABASE_URL!, [schema]);
    });

    test('two workers share a set (commands and a Playwright suite); a SIGKILLed one loses nothing; a cancel reaches a worker within 2 s', { timeout: 60_000 }, async () => {
      const one = startWorker(server, workerKey);
      const two = startWorker(server, workerKey);
      const ids = await Promise.all([one.id, two.id]);
      const listed = await until('both workers listed', async () => {
        const res = await api<{ workers: Array<{ id: string }> }>(server, 'GET', '/v0/workers');
        return ids.every((id) => res.body.workers.some((w) => w.id === id)) ? res.body.workers : undefined;
      });
      assert.ok(listed.length >= 2);

      const gate = path.join(dir, 'gate-a');
      const setId = await createSet(server, gate);
      await until('the gated member running', () => gatedPids(gate, dir)[0]);
      const gatedOn = (await members(server, setId)).find((m) => m.name === 'gated')!.workerId!;
      const victim = gatedOn === ids[0] ? one : two;
      victim.proc.kill('SIGKILL');
      await victim.exited;
      // Its member runs again on the other worker once its lease (2 s) expires and the API reaps it.
      await until('the gated member rerun elsewhere', async () => {
        const gated = (await members(server, setId)).find((m) => m.name === 'gated');
        return gated?.status === 'RUNNING' && gated.workerId !== gatedOn && gatedPids(gate, dir).length === 2 ? true : undefined;
      }, 20_000);
      writeFileSync(gate, '');
      const done = await waitForSet(server, setId, 30_000);
      assert.equal(done.status, 'SUCCESS', JSON.stringify(await members(server, setId)));
      const ran = await members(server, setId);
      // The skipped mark crossed the worker wire with its outcome.
      assert.deepEqual(ran.filter((m) => m.skipped).map((m) => m.name), ['shop.spec.js › gift card']);
      assert.ok(new Set(ran.map((m) => m.workerId)).size >= 2, `members spread over both workers: ${JSON.stringify(ran.map((m) => [m.name, m.workerId]))}`);
      for (const m of ran.filter((r) => r.name.startsWith('cmd'))) {
        assert.match(m.output ?? '', /token \*\*\*/, 'the secret reached the test, opened by the API, and was masked');
        assert.ok(!(m.output ?? '').includes(SECRET));
      }

      // Cancel: the survivor's gated member is killed within 2 s.
      const cancelGate = path.join(dir, 'gate-c');
      const cancelled = await createSet(server, cancelGate, COMMANDS_ONLY);
      const running = await until('the gated member running', () => gatedPids(cancelGate, dir)[0]);
      const at = Date.now();
      assert.equal((await api(server, 'POST', `/v0/test-run-sets/${cancelled}/cancel`)).status, 200);
      await until('the cancelled member killed', () => (pidAlive(running) ? undefined : true), 2000);
      assert.ok(Date.now() - at < 2000);
      await waitForSet(server, cancelled, 10_000);

      const survivor = victim === one ? two : one;
      survivor.proc.kill('SIGTERM');
      assert.equal(await survivor.exited, 0, survivor.log());
      assert.ok(!survivor.log().includes(workerKey), 'the key is never logged');
    });

    test('--set takes only that set; --exit-when-idle exits 0; a stale finish answers 409 and writes nothing', { timeout: 40_000 }, async () => {
      const other = await createSet(server, path.join(dir, 'open'), COMMANDS_ONLY);
      const mine = await createSet(server, path.join(dir, 'open'), COMMANDS_ONLY);
      writeFileSync(path.join(dir, 'open'), '');
      const worker = startWorker(server, workerKey, ['--set', mine, '--exit-when-idle', '1s']);
      assert.equal(await worker.exited, 0, worker.log());
      assert.equal((await waitForSet(server, mine, 1)).status, 'SUCCESS');
      assert.ok((await members(server, other)).every((m) => m.status === 'WAITING' && m.workerId === null), 'the other set was left alone');
      assert.match(worker.log(), new RegExp(`set ${mine} only`));

      // A lease that moved: claimed with a short lease, reaped back to WAITING, then finished late.
      const call = (route: string, body: unknown) =>
        api<{ runs?: Array<{ id: string; claim: number; env: string; batchKey: string | null; leaseToken: string }>; code?: string }>(server, 'POST', route, { body, auth: `Bearer ${workerKey}` });
      const claimed = await call('/v0/worker/claims', { workerId: 'stale', limit: 10, leaseMs: 200, setId: other });
      const run = claimed.body.runs?.find((r) => r.batchKey === null); // a command: RUNNING from its claim on
      assert.ok(run, claimed.text);
      await until('the leases reaped', async () => ((await members(server, other)).every((m) => m.status === 'WAITING') ? true : undefined));
      // Its own ticket: the lease was this key's, and has moved since.
      const lease = { runId: run.id, workerId: 'stale', claim: run.claim, token: run.leaseToken };
      const outcome = { status: 'SUCCESS', attempts: 1, error: null, output: 'late', durationMs: 5 };
      const late = await call('/v0/worker/leases/finish', { lease, outcome, run: { setId: other, env: run.env, name: 'cmd 1' } });
      assert.equal(late.status, 409, late.text);
      assert.equal(late.body.code, 'lease_lost');
      const step = await call('/v0/worker/leases/finish-and-claim', { lease, outcome, run: { setId: other, env: run.env, name: 'cmd 1' }, next: { workerId: 'stale', limit: 5, leaseMs: 30_000, setId: other } });
      assert.equal(step.status, 409, step.text);
      const after = await members(server, other);
      assert.ok(after.every((m) => m.status === 'WAITING' && m.output === null), JSON.stringify(after));
      assert.equal((await api(server, 'POST', `/v0/test-run-sets/${other}/cancel`)).status, 200);
    });

    test('the protocol revision: settings name the API\'s version and the revisions it takes; another revision is refused saying which', async () => {
      const auth = `Bearer ${workerKey}`;
      const settings = await api<{ version: string; protocol: { oldest: number; newest: number } }>(server, 'GET', '/v0/worker/settings', { auth });
      assert.equal(settings.status, 200, settings.text);
      assert.equal(settings.body.version, VERSION);
      assert.deepEqual(settings.body.protocol, { oldest: OLDEST_WORKER_PROTOCOL, newest: WORKER_PROTOCOL });
      const sent = (revision: string) => api<{ code: string; detail: string }>(server, 'POST', '/v0/worker/workers/heartbeat', { body: { id: 'rev' }, auth, headers: { [WORKER_PROTOCOL_HEADER]: revision } });
      assert.equal((await sent(String(WORKER_PROTOCOL))).status, 200, 'its own revision');
      for (const revision of [String(WORKER_PROTOCOL + 1), String(OLDEST_WORKER_PROTOCOL - 1), 'two', '1'.repeat(200)]) {
        const refused = await sent(revision);
        assert.equal(refused.status, 400, refused.text);
        assert.equal(refused.body.code, 'worker_protocol_unsupported');
        assert.match(refused.body.detail, new RegExp(`takes worker protocol revisions ${OLDEST_WORKER_PROTOCOL} to ${WORKER_PROTOCOL}.*runset ${VERSION.replace(/\./g, '\\.')}`));
        assert.ok(refused.body.detail.length < 400, 'the detail quotes little of what it was sent');
      }
    });

    test('a worker key may use only the worker protocol; a trigger key may not use it', async () => {
      const set = await createSet(server, path.join(dir, 'open'));
      assert.equal((await api(server, 'GET', `/v0/test-run-sets/${set}`, { auth: `Bearer ${workerKey}` })).status, 403);
      assert.equal((await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' }, auth: `Bearer ${workerKey}` })).status, 403);
      assert.equal((await api(server, 'GET', '/v0/worker/settings', { auth: `Bearer ${triggerKey}` })).status, 403);
      assert.equal((await api(server, 'POST', '/v0/session', { body: { key: workerKey }, headers: { origin: server.url.replace(/\/api$/, '') } })).status, 403);
      // A bad protocol body names the protocol's own fields, not the create body's.
      const bad = await api<{ code: string; detail: string }>(server, 'POST', '/v0/worker/claims', { body: { workerId: 'w', limit: 0 }, auth: `Bearer ${workerKey}` });
      assert.equal(bad.status, 400);
      assert.match(bad.body.detail, /leaseMs/);
      assert.doesNotMatch(bad.body.detail, /envOverride/);
      assert.equal((await api(server, 'POST', `/v0/test-run-sets/${set}/cancel`)).status, 200);
    });
  });
}
