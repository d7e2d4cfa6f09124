/**
 * Host-wide port locks (src/scheduler/host-lock.ts) on real sockets: one holder
 * per port in one process and across processes, all-or-none over several
 * ports, and a waiter that hears the release — or the holder's death, with no
 * stale lock left behind. A second worker process of a host is told at start
 * that it cannot help a fixed-port suite.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { lockPorts, whenFree, type HeldLock } from '../../src/scheduler/host-lock.js';
import { SECOND_PROCESS_ADVICE, WebServerGate } from '../../src/scheduler/webserver-gate.js';

const HOST_LOCK = fileURLToPath(new URL('../../src/scheduler/host-lock.js', import.meta.url));
/** Ports no other test of this run uses: the lock is host-wide. */
const base = 40_000 + (process.pid % 10_000) * 2;

function held(got: Awaited<ReturnType<typeof lockPorts>>): HeldLock {
  assert.ok('held' in got, `expected the lock, got ${JSON.stringify(got)}`);
  return got.held;
}

test('one holder per port; a waiter hears the release; then it can be taken again', async () => {
  const first = held(await lockPorts([base]));
  assert.deepEqual(await lockPorts([base]), { busy: base });
  let freed = false;
  const waiting = whenFree(base).then(() => (freed = true));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(freed, false, 'still held');
  first.release();
  await waiting;
  held(await lockPorts([base])).release();
  await whenFree(base + 1); // nobody holds it: at once
});

test('several ports: all or none', async () => {
  const b = held(await lockPorts([base + 1]));
  assert.deepEqual(await lockPorts([base, base + 1]), { busy: base + 1 });
  held(await lockPorts([base])).release(); // the first port was let go again
  b.release();
  held(await lockPorts([base + 1, base, base + 1])).release();
});

test('across processes: a holder that dies frees the lock, and its waiter hears it', async () => {
  const child = spawn(process.execPath, ['--input-type=module', '-e', `
    const { lockPorts } = await import(${JSON.stringify(HOST_LOCK)});
    const got = await lockPorts([${base}]);
    console.log('held' in got ? 'held' : 'busy');
    setInterval(() => {}, 1000);
  `], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    await new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => d.toString().includes('held') && resolve()));
    assert.deepEqual(await lockPorts([base]), { busy: base }, 'held by the other process');
    const waiting = whenFree(base);
    // whenFree's socket never keeps a process alive (a worker has its own handles): this test holds the loop open
    // itself, or once the dead child's exit is handled, Node ends the run before the close reaches the waiter.
    const keepAlive = setInterval(() => undefined, 1000);
    child.kill('SIGKILL');
    await waiting.finally(() => clearInterval(keepAlive));
    held(await lockPorts([base])).release();
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
});

test('a second worker process of the host: it says at start that it cannot help a fixed-port suite, and how to get more slots', async () => {
  const said: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void said.push((JSON.parse(line) as { msg: string }).msg) });
  // The first gate of this process may itself find the mark held: other runset processes of this machine run at the same time.
  const first = new WebServerGate(() => undefined, logger);
  await first.start();
  const before = said.length;
  const second = new WebServerGate(() => undefined, logger);
  await second.start();
  assert.deepEqual(said.slice(before), [SECOND_PROCESS_ADVICE]);
  assert.match(SECOND_PROCESS_ADVICE, /one worker process --workers N/);
  second.stop();
  first.stop();
});
