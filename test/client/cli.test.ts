/**
 * The real binary: `node dist/src/cli/main.js trigger …` spawned against the
 * scripted fake server, for what only a process shows — its exit code, and
 * what reaches its stdout and stderr.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { VERSION } from '../../src/core/version.js';
import { assertNoLeakedFakeServers, problem, SET_ID, startFakeServer, statusReply, type Routes } from './fake-server.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const KEY = 'rs_cli_test_key_0f1e2d3c4b5a69788796';
const live = new Set<number>();

after(async () => {
  await assertNoLeakedFakeServers();
  assert.equal(live.size, 0, 'a spawned CLI was left running');
});

interface Result {
  code: number | null;
  out: string;
  err: string;
}

/** Spawned asynchronously: the fake server lives in this process and must keep answering. */
function cli(args: string[], env: Record<string, string>): Promise<Result> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNSET_') && !k.startsWith('GITHUB_')));
  const child = spawn(process.execPath, [MAIN, 'trigger', ...args], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid) live.add(child.pid);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      if (child.pid) live.delete(child.pid);
      resolve({ code, out, err });
    }),
  );
}

async function against(routes: Routes, args: string[]): Promise<Result> {
  const server = await startFakeServer(routes);
  try {
    return await cli(args, { RUNSET_URL: server.url, RUNSET_API_KEY: KEY });
  } finally {
    await server.close();
  }
}

const skip = existsSync(MAIN) ? false : 'dist/src/cli/main.js is not built';
const FAST = ['--interval', '50ms'];

test('exit 0 without --wait, with only the id on stdout', { skip }, async () => {
  const r = await against({}, ['--env', 'staging']);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, `${SET_ID}\n`);
});

test('exit 1 on FAIL, 0 on SUCCESS, with --wait', { skip }, async () => {
  const failed = await against({ status: () => statusReply('FAIL', { FAIL: 1 }) }, ['--env', 'staging', '--wait', ...FAST]);
  assert.equal(failed.code, 1, failed.err);
  const passed = await against({ status: () => statusReply('SUCCESS', { SUCCESS: 1 }) }, ['--env', 'staging', '--wait', ...FAST]);
  assert.equal(passed.code, 0, passed.err);
});

test('exit 2 when the set does not end within --timeout', { skip }, async () => {
  const r = await against({ status: () => statusReply('RUNNING', { RUNNING: 1 }) }, ['--env', 'staging', '--wait', '--timeout', '300ms', ...FAST]);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /timed out/);
});

test('exit 3 on 401 at create, on 404 mid-poll, and on usage errors — never showing the key', { skip }, async () => {
  const denied = await against({ create: (req) => problem(401, 'unauthorized', `got ${String(req.headers.authorization)}`) }, ['--env', 'staging']);
  assert.equal(denied.code, 3);
  const gone = await against({ status: () => problem(404, 'not_found', 'No such set') }, ['--env', 'staging', '--wait', ...FAST]);
  assert.equal(gone.code, 3);
  const usage = await cli(['--env', 'staging', '--override', 'NOEQUALS'], { RUNSET_URL: 'http://127.0.0.1:9/api', RUNSET_API_KEY: KEY });
  assert.equal(usage.code, 3);
  assert.match(usage.err, /expected K=V/);
  for (const r of [denied, gone, usage]) assert.ok(!r.out.includes(KEY) && !r.err.includes(KEY), 'the key leaked');
  assert.match(denied.err, /Bearer \*\*\*/);
});

test('runset --version and -V print the version alone (no command module loaded for them) and exit 0', { skip }, () => {
  for (const flag of ['--version', '-V']) {
    const r = spawnSync(process.execPath, [MAIN, flag], { encoding: 'utf8', timeout: 15_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${VERSION}\n`);
  }
});

test('--help exits 0', { skip }, async () => {
  const r = await cli(['--help'], {});
  assert.equal(r.code, 0);
  assert.match(r.out, /RUNSET_API_KEY/);
});
