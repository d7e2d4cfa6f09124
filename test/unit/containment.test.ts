/**
 * Containment (src/executors/containment.ts) and slot users
 * (src/executors/test-users.ts) on this machine, for real: a command's setsid
 * child is gone when runCommand answers; a test process is born in a cgroup
 * no running test shares, reused only once emptied, so nothing a test left
 * behind can read the next one's secrets; a slot user
 * given back has no process left. Skipped where the machine allows neither
 * (no writable cgroup v2; not root).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { detectContainment, openCage } from '../../src/executors/containment.js';
import { runCommand } from '../../src/executors/command/index.js';
import { lookUpRunAsUser } from '../../src/executors/run-as.js';
import { slotUsers, TestUsers } from '../../src/executors/test-users.js';
import { pidAlive } from '../helpers/server.js';

const containment = detectContainment();
const root = containment.kind === 'cgroup' ? containment.root : '';
const noCgroup = containment.kind === 'cgroup' ? undefined : `no cgroup containment: ${containment.why}`;

/** Why slot users cannot be had here, or undefined once runset-test exists. */
function makeUser(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root';
  try {
    execFileSync('id', ['-u', 'runset-test'], { stdio: 'ignore' });
    return undefined;
  } catch {
    // not there yet
  }
  try {
    execFileSync('useradd', ['--system', '--no-create-home', 'runset-test'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'cannot create runset-test';
  }
}

const LEAVE = (pidFile: string) => `setsid sh -c 'echo $$ > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; exec sleep 30' </dev/null >/dev/null 2>&1 &
while [ ! -f ${pidFile} ]; do sleep 0.02; done`;

/** Runs `script` through sh with runCommand under this machine's containment; its result. */
function sh(script: string, variables: Record<string, string> = {}) {
  return runCommand({ type: 'command', name: 'sh', run: ['sh', '-c', script], cwd: tmpdir(), tags: [], timeoutSeconds: 10, retries: 0 }, { variables, signal: new AbortController().signal }, { containment });
}

/** This process's cgroups under runset's root. */
const mine = () => readdirSync(root).filter((e) => e.startsWith(`t-${process.pid}-`));
const populated = (dir: string) => /^populated 1$/m.test(readFileSync(path.join(root, dir, 'cgroup.events'), 'utf8'));
/** The cgroup v2 line of /proc/<pid>/cgroup (`0::/…`). */
const cgroupLine = (text: string) => /^0::(.*)$/m.exec(text)?.[1];

describe('cgroup containment', { skip: noCgroup }, () => {
  test('a command\'s detached child is gone when the command\'s result is in, and its cgroup is left empty for the next one', async () => {
    const pidFile = path.join(tmpdir(), `runset-cage-${process.pid}.pid`);
    const result = await sh(LEAVE(pidFile));
    assert.equal(result.passed, true, result.output);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    assert.equal(pidAlive(pid), false, `the setsid child ${pid} outlived the command`);
    assert.ok(mine().length >= 1 && mine().every((dir) => !populated(dir)), 'its cgroup is kept, empty');
  });

  test('a test process is born in its cgroup, and the process that started it is back in its own', async () => {
    const before = cgroupLine(readFileSync('/proc/self/cgroup', 'utf8'));
    const result = await sh('cat /proc/self/cgroup');
    assert.equal(result.passed, true, result.output);
    assert.match(cgroupLine(result.output) ?? '', new RegExp(`/runset/t-${process.pid}-\\d+$`), 'the test ran in a cgroup of its own');
    assert.equal(cgroupLine(readFileSync('/proc/self/cgroup', 'utf8')), before, 'the spawner left the cgroup');
  });

  test('tests running at once never share a cgroup; one after the other reuse it, emptied', async () => {
    const cgroupOf = async (script: string) => cgroupLine((await sh(`cat /proc/self/cgroup; ${script}`)).output);
    const [a, b] = await Promise.all([cgroupOf('sleep 0.3'), cgroupOf('sleep 0.3')]);
    assert.ok(a && b && a !== b, `two running tests, two cgroups (${a}, ${b})`);
    const c = await cgroupOf('true');
    assert.ok(c === a || c === b, 'a later test reuses a free cgroup');
  });

  test('a process a test leaves behind cannot read the next test\'s secrets', async () => {
    // The first test leaves a detached watcher that reads every environment it can, over and over.
    const dir = mkdtempSync(path.join(tmpdir(), 'runset-cage-'));
    const seen = path.join(dir, 'seen');
    const pidFile = path.join(dir, 'watcher.pid');
    // (Without containment it does see it: /proc/<pid>/environ of a process of the same user.)
    const watch = `while :; do grep -ah NEXT_SECRET /proc/[0-9]*/environ >> ${seen} 2>/dev/null; sleep 0.01; done`;
    const first = await sh(`setsid sh -c 'echo $$ > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; ${watch}' </dev/null >/dev/null 2>&1 &
while [ ! -f ${pidFile} ]; do sleep 0.02; done; cat /proc/self/cgroup`);
    assert.equal(first.passed, true, first.output);
    assert.equal(pidAlive(Number(readFileSync(pidFile, 'utf8'))), false, 'the watcher ended with its test');
    // The next test, in the same cgroup, holds a secret for a while.
    const next = await sh('cat /proc/self/cgroup; sleep 0.3', { NEXT_SECRET: 'the-next-tests-secret' });
    assert.equal(next.passed, true, next.output);
    assert.equal(cgroupLine(next.output), cgroupLine(first.output), 'the next test ran in the cgroup the first one left');
    assert.equal(existsSync(seen) ? readFileSync(seen, 'utf8') : '', '', 'nothing of the first test saw the secret');
  });

  test('a cage of process groups only starts the program as it is and ends at once', async () => {
    const cage = openCage({ kind: 'process-group', why: 'test' }, undefined, 'true', []);
    assert.deepEqual(cage.start, { file: 'true', args: [] });
    await cage.end();
  });
});

describe('slot users', { skip: makeUser() }, () => {
  test('a slot user given back has no process left, detached ones included', async () => {
    const [user] = slotUsers(lookUpRunAsUser('runset-test'), 1);
    assert.ok(user && user.name === 'runset-test-1');
    const users = new TestUsers([user]);
    const taken = await users.take();
    // A test of that user leaves a detached sleeper behind and ends.
    const pid = Number(execFileSync('sh', ['-c', 'setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $!'], { uid: taken.uid, gid: taken.gid, encoding: 'utf8' }).trim());
    assert.ok(existsSync(`/proc/${pid}`), 'the sleeper runs');
    users.give(taken);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(pidAlive(pid), false, 'the slot user\'s process was killed');
    assert.equal((await users.take()).uid, taken.uid, 'the user serves the next member');
  });
});
