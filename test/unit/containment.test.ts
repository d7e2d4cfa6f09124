/**
 * Containment (src/executors/containment.ts) and slot users
 * (src/executors/test-users.ts) on this machine, for real: a command's setsid
 * child is gone when runCommand answers, and its cgroup removed; a slot user
 * given back has no process left. Skipped where the machine allows neither
 * (no writable cgroup v2; not root).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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

describe('cgroup containment', { skip: noCgroup }, () => {
  test('a command\'s detached child is gone when the command\'s result is in, and its cgroup removed', async () => {
    const pidFile = path.join(tmpdir(), `runset-cage-${process.pid}.pid`);
    const before = readdirSync(root).filter((e) => e.startsWith(`t-${process.pid}-`));
    const result = await runCommand({ type: 'command', name: 'leaves', run: ['sh', '-c', LEAVE(pidFile)], cwd: tmpdir(), tags: [], timeoutSeconds: 5, retries: 0 }, { variables: {}, signal: new AbortController().signal }, { containment });
    assert.equal(result.passed, true, result.output);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    assert.equal(pidAlive(pid), false, `the setsid child ${pid} outlived the command`);
    assert.deepEqual(readdirSync(root).filter((e) => e.startsWith(`t-${process.pid}-`)), before, 'its cgroup is removed');
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
