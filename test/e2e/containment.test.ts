/**
 * A test owns nothing after it ends (docs/architecture.md, "What a test can
 * see"): a command that starts a detached process (`setsid … &`) and exits
 * leaves nothing running once its member ends, on a worker in the serve
 * process and on a worker over HTTP; and the data dir is runset's alone
 * (0700, the store's files 0600), a looser one tightened at start.
 *
 * The detached process is gone only where the worker can contain tests in
 * cgroups (cgroup v2, written as root) or runs them as a user of its own
 * (--run-as, test/e2e/run-as.test.ts): elsewhere this part is skipped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { detectContainment } from '../../src/executors/containment.js';
import { api, assertNoLeakedServers, CLI, pidAlive, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';

const containment = detectContainment();
const NO_CGROUP = containment.kind === 'cgroup' ? undefined : `no cgroup containment here: ${containment.why}`;

/** Starts a detached sleeper that writes its pid to $PID_FILE, then exits at once. */
const LEAVE_BEHIND = `setsid sh -c 'echo $$ > "$PID_FILE.tmp"; mv "$PID_FILE.tmp" "$PID_FILE"; exec sleep 60' </dev/null >/dev/null 2>&1 &
while [ ! -f "$PID_FILE" ]; do sleep 0.02; done
echo started`;

const CONFIG = `
environments:
  left: { variables: { PID_FILE: "unset" } }
tests:
  - { name: leaves, type: command, run: [sh, -c, ${JSON.stringify(LEAVE_BEHIND)}], environments: [left] }
`;

const workers = new Set<ChildProcess>();

after(() => {
  for (const proc of workers) proc.kill('SIGKILL');
  assertNoLeakedServers();
});

/** Runs the `left` environment's set; returns the pid the command's detached child wrote. */
async function runLeaving(server: RunningServer, dir: string): Promise<number> {
  const pidFile = path.join(dir, `left-${Date.now()}.pid`);
  const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'left', envOverride: { PID_FILE: pidFile } } });
  assert.equal(created.status, 200, created.text);
  const done = await waitForSet(server, created.body.testRunSetId as string, 30_000);
  assert.equal(done.status, 'SUCCESS', server.logs());
  return Number(readFileSync(pidFile, 'utf8').trim());
}

/** `runset worker --url` with a worker key, as an HTTP worker runs on another machine. */
async function httpWorker(server: RunningServer): Promise<{ proc: ChildProcess; log: () => string }> {
  const key = await api<{ token: string }>(server, 'POST', '/v0/keys', { body: { name: 'containment worker', role: 'worker' } });
  assert.equal(key.status, 201, key.text);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNSET_')));
  const proc = spawn(process.execPath, [CLI, 'worker', '--url', server.url, '--workers', '1', '--log-level', 'warn'], {
    env: { ...env, RUNSET_API_KEY: key.body.token },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  workers.add(proc);
  proc.on('exit', () => workers.delete(proc));
  let log = '';
  proc.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  for (const deadline = Date.now() + 20_000; !/runset: worker \S+ with/.test(log); ) {
    if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`the worker did not start:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { proc, log: () => log };
}

describe('a detached process a test started ends with its member', { skip: NO_CGROUP }, () => {
  test('on a worker in the serve process', async () => {
    const dir = tempDir('runset-contain-');
    const server = await startRunset({ config: CONFIG, args: ['--workers', '1'] });
    try {
      const pid = await runLeaving(server, dir);
      assert.ok(pid > 0);
      assert.equal(pidAlive(pid), false, `the setsid child ${pid} outlived its member`);
    } finally {
      await server.stop();
    }
  });

  test('on a worker over HTTP, which names its containment when it starts', async () => {
    const dir = tempDir('runset-contain-');
    const server = await startRunset({ config: CONFIG, args: ['--no-workers', '--poll', '300ms'] });
    try {
      const worker = await httpWorker(server);
      assert.match(worker.log(), /tests contained by cgroup/);
      const pid = await runLeaving(server, dir);
      assert.equal(pidAlive(pid), false, `the setsid child ${pid} outlived its member`);
      worker.proc.kill('SIGTERM');
    } finally {
      await server.stop();
    }
  });
});

describe('the data dir is runset\'s alone', () => {
  test('a new data dir is 0700 and the store\'s files 0600, without --run-as', async () => {
    const dataDir = path.join(tempDir('runset-private-'), 'data');
    const server = await startRunset({ config: CONFIG, dataDir, args: ['--no-workers'] });
    try {
      assert.equal(statSync(dataDir).mode & 0o777, 0o700);
      for (const file of ['runset.db', 'runset.db-wal', 'runset.db-shm']) {
        const full = path.join(dataDir, file);
        assert.ok(existsSync(full), `${file} exists (WAL mode)`);
        assert.equal(statSync(full).mode & 0o777, 0o600, file);
      }
    } finally {
      await server.stop();
    }
  });

  test('an existing looser data dir and store file are tightened at start', async () => {
    const dataDir = path.join(tempDir('runset-private-'), 'data');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const first = await startRunset({ config: CONFIG, dataDir, args: ['--no-workers'] });
    await first.stop();
    chmodSync(dataDir, 0o755);
    chmodSync(path.join(dataDir, 'runset.db'), 0o644);
    const server = await startRunset({ config: CONFIG, dataDir, args: ['--no-workers'] });
    try {
      assert.equal(statSync(dataDir).mode & 0o777, 0o700);
      assert.equal(statSync(path.join(dataDir, 'runset.db')).mode & 0o777, 0o600);
    } finally {
      await server.stop();
    }
  });
});
