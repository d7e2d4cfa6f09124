/**
 * Cancel and fail fast over real HTTP (SQLite, one serve process): a running
 * command is stopped (its process gone) and a waiting member ends at once, the
 * members say who cancelled them, a second cancel changes nothing; an
 * environment's maxFailures cancels the rest; `runset cancel`; and `trigger
 * --wait` killed with SIGTERM cancels its set.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, CLI, pidAlive, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';

interface Member {
  name: string;
  status: string;
  error: string | null;
  durationMs: number | null;
  cancelledBy: { keyId: string; keyName: string } | null;
}

const dir = tempDir('runset-cancel-');
const pidFile = path.join(dir, 'sleeper.pid');
const SLEEPER = `[node, -e, "require('fs').writeFileSync(process.env.PID_FILE, String(process.pid)); setTimeout(() => {}, 60000)"]`;
const CONFIG = `
environments:
  staging:
    variables:
      PID_FILE: ${pidFile}
  fast:
    maxFailures: 1
    variables:
      PID_FILE: ${pidFile}
tests:
  - name: broken
    type: command
    run: [node, -e, "setTimeout(() => process.exit(1), 300)"]
    environments: [fast]
  - name: sleeper
    type: command
    run: ${SLEEPER}
  - name: after
    type: command
    run: [node, -e, "0"]
`;

async function until(what: string, check: () => boolean | Promise<boolean>, withinMs = 15_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function sleeperPid(): number {
  return Number(readFileSync(pidFile, 'utf8'));
}

describe('cancel and fail fast', () => {
  let server: RunningServer;

  before(async () => {
    // One slot: while the sleeper runs, the next member waits.
    server = await startRunset({ config: CONFIG, args: ['--workers', '1'] });
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
    assertNoLeakedServers();
    rmSync(dir, { recursive: true, force: true });
  });

  async function startSleeping(env: string): Promise<string> {
    rmSync(pidFile, { force: true });
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env } });
    assert.equal(created.status, 200, created.text);
    await until('the sleeper runs', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '');
    return created.body.testRunSetId as string;
  }

  test('cancel ends the set FAIL at once, stops the running command, and names the key', async () => {
    const id = await startSleeping('staging');
    const pid = sleeperPid();
    const cancelled = await api<{ status: string; cancelled: boolean; progress: { counts: Record<string, number> } }>(server, 'POST', `/v0/test-run-sets/${id}/cancel`);
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.status, 'FAIL');
    assert.equal(cancelled.body.cancelled, true);
    assert.deepEqual(cancelled.body.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 2 });
    await until('the sleeper is stopped', () => !pidAlive(pid), 2000);

    const members = await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`);
    assert.deepEqual(members.body.testRuns.map((m) => [m.name, m.status, m.error, m.cancelledBy?.keyName]), [
      ['sleeper', 'FAIL', 'cancelled', 'bootstrap'],
      ['after', 'FAIL', 'cancelled', 'bootstrap'],
    ]);
    assert.ok((members.body.testRuns[0]!.durationMs ?? -1) >= 0);
    const details = await api<{ cancellation: { byKeyName: string; error: string } | null }>(server, 'GET', `/v0/test-run-sets/${id}/details`);
    assert.equal(details.body.cancellation?.byKeyName, 'bootstrap');

    const again = await api<{ status: string; cancelled: boolean }>(server, 'POST', `/v0/test-run-sets/${id}/cancel`);
    assert.equal(again.status, 200);
    assert.deepEqual([again.body.status, again.body.cancelled], ['FAIL', false], 'an ended set: nothing changes, and it says so');
  });

  test('an unknown set is 404, a bad id 400, no key 401: all problem+json', async () => {
    const unknown = await api(server, 'POST', '/v0/test-run-sets/00000000-0000-4000-8000-000000000000/cancel');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'not_found');
    assert.equal((await api(server, 'POST', '/v0/test-run-sets/nope/cancel')).status, 400);
    const anonymous = await api(server, 'POST', '/v0/test-run-sets/00000000-0000-4000-8000-000000000000/cancel', { auth: null });
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get('content-type') ?? '', /problem\+json/);
  });

  test('maxFailures: the first failure cancels the rest, running and waiting, with the reason', async () => {
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'fast' } });
    const id = created.body.testRunSetId as string;
    // No history: every member is expected alike, so config order decides; with one slot, the rest wait.
    const status = await waitForSet(server, id, 20_000);
    assert.equal(status.status, 'FAIL');
    const members = await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`);
    const byName = new Map(members.body.testRuns.map((m) => [m.name, m]));
    assert.equal(byName.get('broken')?.error, 'exited with code 1');
    for (const name of ['sleeper', 'after']) {
      assert.equal(byName.get(name)?.status, 'FAIL');
      assert.equal(byName.get(name)?.error, 'cancelled: maxFailures 1 reached');
      assert.equal(byName.get(name)?.cancelledBy, null, 'no key cancelled it');
    }
    const details = await api<{ maxFailures: number; cancellation: { byKeyId: string | null; error: string } }>(server, 'GET', `/v0/test-run-sets/${id}/details`);
    assert.equal(details.body.maxFailures, 1);
    assert.deepEqual([details.body.cancellation.byKeyId, details.body.cancellation.error], [null, 'cancelled: maxFailures 1 reached']);
  });

  test('`runset cancel ID` cancels; on an ended set it says so and exits 0', async () => {
    const id = await startSleeping('staging');
    const env = { RUNSET_URL: server.url, RUNSET_API_KEY: server.apiKey };
    const first = await runCli(['cancel', id], env);
    assert.equal(first.code, 0, first.err);
    assert.match(first.err, new RegExp(`cancelled test run set ${id}: FAIL`));
    const second = await runCli(['cancel', id, '--json'], env);
    assert.equal(second.code, 0, second.err);
    assert.equal((JSON.parse(second.out) as { cancelled: boolean }).cancelled, false);
    assert.match(second.err, /had already ended FAIL; nothing changed/);
    const missing = await runCli(['cancel', '00000000-0000-4000-8000-000000000000'], env);
    assert.equal(missing.code, 3);
    assert.match(missing.err, /404/);
  });

  test('`trigger --wait` sent SIGTERM cancels its set, then exits 3', async () => {
    rmSync(pidFile, { force: true });
    const env = { RUNSET_URL: server.url, RUNSET_API_KEY: server.apiKey };
    const child = spawnCli(['trigger', '--env', 'staging', '--wait', '--interval', '100ms'], env);
    let pid: number;
    try {
      await until('the sleeper runs', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '');
      pid = sleeperPid();
    } finally {
      child.proc.kill('SIGTERM');
    }
    const result = await child.done;
    assert.equal(result.code, 3, result.err);
    const m = /received SIGTERM; cancelled test run set (\S+)/.exec(result.err);
    assert.ok(m, result.err);
    const status = await api<{ status: string }>(server, 'GET', `/v0/test-run-sets/${m[1]}`);
    assert.equal(status.body.status, 'FAIL');
    await until('the sleeper is stopped', () => !pidAlive(pid), 2000);
    assert.ok(!result.err.includes(server.apiKey));
  });

  test('`trigger --wait --no-cancel-on-exit` leaves its set running', async () => {
    rmSync(pidFile, { force: true });
    const env = { RUNSET_URL: server.url, RUNSET_API_KEY: server.apiKey };
    const child = spawnCli(['trigger', '--env', 'staging', '--wait', '--interval', '100ms', '--no-cancel-on-exit'], env);
    try {
      await until('the sleeper runs', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '');
    } finally {
      child.proc.kill('SIGINT');
    }
    const result = await child.done;
    assert.equal(result.code, 3);
    const m = /received SIGINT; test run set (\S+) was left running/.exec(result.err);
    assert.ok(m, result.err);
    assert.equal((await api<{ status: string }>(server, 'GET', `/v0/test-run-sets/${m[1]}`)).body.status, 'RUNNING');
    await api(server, 'POST', `/v0/test-run-sets/${m[1]}/cancel`);
  });
});

function spawnCli(args: string[], env: Record<string, string>) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNSET_')));
  const proc = spawn(process.execPath, [CLI, ...args], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) => proc.on('close', (code) => resolve({ code, out, err })));
  return { proc, done };
}

function runCli(args: string[], env: Record<string, string>) {
  return spawnCli(args, env).done;
}
