import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { getEventListeners } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CommandTestSpec, ExecutionContext } from '../../src/core/types.js';
import { commandExecutor } from '../../src/executors/command/index.js';
import { TailBuffer } from '../../src/executors/tail-buffer.js';

const NODE = process.execPath;
const workDir = mkdtempSync(path.join(tmpdir(), 'runset-command-'));
const startedPids: number[] = [];

after(async () => {
  // A test that leaves a process behind fails here rather than slowing the machine silently.
  const survivors = [];
  for (const pid of startedPids) if (!(await waitUntilGone(pid, 2000))) survivors.push(pid);
  rmSync(workDir, { recursive: true, force: true });
  assert.deepEqual(survivors, [], 'every grandchild was killed');
});

function spec(run: string[], cwd = workDir): CommandTestSpec {
  return { name: 'cmd', type: 'command', run, cwd, tags: [], timeoutSeconds: 5, retries: 0 };
}

function ctx(variables: Record<string, string> = {}, signal: AbortSignal = new AbortController().signal): ExecutionContext {
  return { variables, signal };
}

/** Running, and not a zombie waiting for a parent that will never reap it (PID 1 in some containers). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function waitUntilGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

async function waitForFile(file: string, ms: number): Promise<string> {
  const deadline = Date.now() + ms;
  while (!existsSync(file) || readFileSync(file, 'utf8') === '') {
    if (Date.now() > deadline) throw new Error(`${file} never appeared`);
    await sleep(20);
  }
  return readFileSync(file, 'utf8');
}

/** A node script that starts a long-lived grandchild in the same process group and writes its pid to `pidFile`. */
function grandparentScript(pidFile: string, thenExit: boolean): string {
  return `
    const { spawn } = require('node:child_process');
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'inherit' });
    require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(child.pid));
    ${thenExit ? 'process.exit(0);' : 'setInterval(() => {}, 1000);'}
  `;
}

describe('commandExecutor', () => {
  test('exit code 0 passes and the output is captured', async () => {
    const controller = new AbortController();
    const result = await commandExecutor.run(spec([NODE, '-e', 'console.log("hello"); console.error("warn")']), ctx({}, controller.signal));
    assert.deepEqual(result, { passed: true, error: null, output: result.output });
    assert.match(result.output, /hello\n/);
    assert.match(result.output, /warn\n/);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0, 'no abort listener left behind');
  });

  test('a non-zero exit fails with the code; a signal with its name', async () => {
    const exited = await commandExecutor.run(spec([NODE, '-e', 'process.exit(3)']), ctx());
    assert.deepEqual([exited.passed, exited.error], [false, 'exited with code 3']);
    const killed = await commandExecutor.run(spec([NODE, '-e', 'process.kill(process.pid, "SIGTERM")']), ctx());
    assert.deepEqual([killed.passed, killed.error], [false, 'killed by signal SIGTERM']);
  });

  test('a missing program is ENOENT, a missing working directory says so', async () => {
    const missing = await commandExecutor.run(spec(['runset-no-such-command']), ctx());
    assert.deepEqual([missing.passed, missing.error], [false, 'cannot start "runset-no-such-command": command not found (ENOENT)']);
    const noDir = await commandExecutor.run(spec([NODE, '-e', ''], path.join(workDir, 'absent')), ctx());
    assert.match(noDir.error ?? '', /^cannot start ".*": working directory .*absent does not exist \(ENOENT\)$/);
  });

  test('variables arrive as environment variables; RUNSET_* settings do not leak', async () => {
    process.env.RUNSET_TEST_SECRET = 'do-not-leak';
    try {
      const script = 'console.log(JSON.stringify({ greeting: process.env.GREETING, runset: Object.keys(process.env).filter((k) => k.startsWith("RUNSET_")), path: !!process.env.PATH }))';
      const result = await commandExecutor.run(spec([NODE, '-e', script]), ctx({ GREETING: 'hi there' }));
      assert.equal(result.error, null);
      assert.deepEqual(JSON.parse(result.output), { greeting: 'hi there', runset: [], path: true });
    } finally {
      delete process.env.RUNSET_TEST_SECRET;
    }
  });

  test('runs in the spec cwd, with arguments passed verbatim (no shell)', async () => {
    const result = await commandExecutor.run(spec([NODE, '-e', 'console.log(process.cwd()); console.log(process.argv[1])', '$HOME; echo *']), ctx());
    assert.equal(result.output, `${realpathSync(workDir)}\n$HOME; echo *\n`);
  });

  test('keeps only the last 64 KiB of interleaved output', async () => {
    const script = 'process.stdout.write("a".repeat(300 * 1024)); process.stdout.write("\\nLAST LINE\\n", () => process.exit(1))';
    const result = await commandExecutor.run(spec([NODE, '-e', script]), ctx());
    assert.equal(result.error, 'exited with code 1');
    assert.equal(Buffer.byteLength(result.output), 64 * 1024);
    assert.match(result.output, /a\nLAST LINE\n$/);
  });

  test('an abort kills the whole process group and returns at once', async () => {
    const pidFile = path.join(workDir, 'abort.pid');
    const controller = new AbortController();
    const running = commandExecutor.run(spec([NODE, '-e', grandparentScript(pidFile, false)]), ctx({}, controller.signal));
    const grandchild = Number(await waitForFile(pidFile, 5000));
    startedPids.push(grandchild);
    assert.ok(isAlive(grandchild));
    const started = Date.now();
    controller.abort('timed out after 5s');
    const result = await running;
    assert.deepEqual([result.passed, result.error], [false, 'aborted: timed out after 5s']);
    assert.ok(Date.now() - started < 500, 'resolved promptly');
    assert.ok(await waitUntilGone(grandchild, 2000), 'grandchild killed');
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });

  test('a grandchild holding the pipes does not hold the result, and is killed', async () => {
    const pidFile = path.join(workDir, 'drain.pid');
    const started = Date.now();
    const result = await commandExecutor.run(spec([NODE, '-e', grandparentScript(pidFile, true)]), ctx());
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    startedPids.push(grandchild);
    assert.deepEqual([result.passed, result.error], [true, null]);
    assert.ok(Date.now() - started < 3000, 'resolved soon after the leader exited');
    assert.ok(await waitUntilGone(grandchild, 2000), 'grandchild killed');
  });

  test('an already aborted signal starts nothing', async () => {
    const controller = new AbortController();
    controller.abort('worker shutting down');
    const result = await commandExecutor.run(spec(['runset-no-such-command']), ctx({}, controller.signal));
    assert.deepEqual(result, { passed: false, error: 'aborted: worker shutting down', output: '' });
  });
});

describe('TailBuffer', () => {
  test('keeps the last bytes across wraps, oldest first', () => {
    const buffer = new TailBuffer(8);
    for (const chunk of ['abc', 'defgh', 'ij', 'klmnopq']) buffer.write(chunk);
    assert.equal(buffer.toString(), 'jklmnopq');
    assert.deepEqual([buffer.total, buffer.dropped, buffer.length], [17, 9, 8]);
    buffer.write('0123456789');
    assert.equal(buffer.toString(), '23456789');
  });

  test('does not start with half a character after a cut', () => {
    const buffer = new TailBuffer(4);
    buffer.write('aé€'); // 1 + 2 + 3 bytes: keeping 4 cuts é in half
    assert.equal(buffer.toString(), '€');
  });
});
