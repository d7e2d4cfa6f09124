/**
 * The one path of every share's process (src/executors/test-process.ts), with
 * real processes: its reporter's events all handed on before its exit, what it
 * started that outlived it stopped by its mark, an abort and a deadline told
 * apart, a program that cannot start said so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { EventLog } from '../../src/executors/event-log.js';
import { runTestProcess } from '../../src/executors/test-process.js';
import { tempDir } from '../helpers/server.js';

const MARK = 'RUNSET_TEST_PROCESS_MARK';

/** Whether `pid` still runs (a zombie waiting for its reaper does not), once a SIGKILL it was sent has had time to land. */
async function stillRuns(pid: number): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    if (stat === '' || / Z /.test(stat.slice(stat.lastIndexOf(')')))) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

test('every event written before the exit is handed on before the exit is; a detached leftover carrying the mark is stopped', async () => {
  const dir = tempDir('runset-test-process-');
  const got: unknown[] = [];
  const events = new EventLog<unknown>(path.join(dir, 'events.jsonl'), (e) => got.push(e));
  const script = [
    "const { appendFileSync } = require('node:fs');",
    "const { spawn } = require('node:child_process');",
    "const left = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });",
    'left.unref();',
    "for (let i = 0; i < 200; i++) appendFileSync(process.env.EVENTS, JSON.stringify({ i }) + '\\n');",
    "console.log('leftover ' + left.pid);",
  ].join('\n');
  const run = runTestProcess(process.execPath, ['-e', script], { name: 'it', markEnv: MARK, cwd: dir, env: { ...process.env, EVENTS: events.file }, events });
  const exit = await run;
  assert.equal(exit.code, 0, exit.log);
  assert.equal(exit.stopped, undefined);
  assert.equal(got.length, 200, 'every event, before the exit');
  const leftover = Number(/leftover (\d+)/.exec(exit.log)?.[1]);
  assert.ok(leftover > 0, exit.log);
  assert.equal(await stillRuns(leftover), false, 'the leftover carried the mark and was stopped');
});

test('an abort and a deadline stop it, each named; a program that cannot start is said so', async () => {
  const dir = tempDir('runset-test-process-');
  const forever = ['-e', 'setInterval(() => {}, 1000)'];
  const controller = new AbortController();
  const aborted = runTestProcess(process.execPath, forever, { name: 'it', markEnv: MARK, cwd: dir, env: process.env, signal: controller.signal });
  controller.abort();
  assert.equal((await aborted).stopped, 'aborted');
  const late = runTestProcess(process.execPath, forever, { name: 'it', markEnv: MARK, cwd: dir, env: process.env, deadlineMs: 200 });
  assert.equal((await late).stopped, 'deadline');
  const missing = await runTestProcess(path.join(dir, 'no-such-program'), [], { name: 'Playwright', markEnv: MARK, cwd: dir, env: process.env });
  assert.equal(missing.code, null);
  assert.match(missing.log, /^cannot start Playwright: /);
});
