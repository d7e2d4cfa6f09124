/**
 * The Playwright runner as a child process: started in its own process group,
 * its reporter's events read from an extra pipe (fd 3) line by line, its own
 * stdout/stderr kept (last 64 KiB) for when it fails before reporting anything.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { killTree } from '../process-tree.js';
import { TailBuffer } from '../tail-buffer.js';
import { REPORTER_FD_ENV, type ReporterEvent } from './reporter.js';

/** After the runner exits, how long its pipes may stay open (a grandchild holding them) before we stop waiting. */
const DRAIN_MS = 2000;

export interface RunnerExit {
  code: number | null;
  signal: string | null;
  /** The runner's own stdout and stderr (not the tests': those come as events). */
  log: string;
}

export interface RunnerProcess {
  readonly pid: number | undefined;
  readonly done: Promise<RunnerExit>;
  /** SIGKILL to the runner, its workers and their browsers; a no-op once it exited. */
  kill(): void;
}

export function startRunner(
  cli: string,
  args: readonly string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; onEvent: (event: ReporterEvent) => void },
): RunnerProcess {
  const log = new TailBuffer();
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [cli, ...args], {
      cwd: opts.cwd,
      env: { ...opts.env, [REPORTER_FD_ENV]: '3' },
      detached: true, // its own process group, so signals aimed at runset's group never reach it by accident
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
  } catch (error) {
    const message = `cannot start Playwright: ${(error as Error).message}`;
    return { pid: undefined, done: Promise.resolve({ code: null, signal: null, log: message }), kill: () => undefined };
  }
  const running = () => child.exitCode === null && child.signalCode === null;
  child.stdout?.on('data', (chunk: Buffer) => log.write(chunk));
  child.stderr?.on('data', (chunk: Buffer) => log.write(chunk));
  readLines(child.stdio[3] as Readable, (line) => {
    let event: ReporterEvent;
    try {
      event = JSON.parse(line) as ReporterEvent;
    } catch {
      return; // not ours: ignore rather than fail the batch
    }
    opts.onEvent(event);
  });
  const done = new Promise<RunnerExit>((resolve) => {
    let drain: NodeJS.Timeout | undefined;
    const settle = (code: number | null, signal: string | null) => {
      clearTimeout(drain);
      resolve({ code, signal, log: log.toString() });
    };
    child.on('error', (error) => {
      log.write(`cannot start Playwright: ${error.message}\n`);
      settle(null, null);
    });
    child.on('exit', (code, signal) => {
      drain = setTimeout(() => settle(code, signal), DRAIN_MS);
    });
    child.on('close', (code, signal) => settle(code, signal));
  });
  return {
    pid: child.pid,
    done,
    kill() {
      // Only while it runs: once reaped, its pid may belong to someone else.
      if (child.pid !== undefined && running()) killTree(child.pid);
    },
  };
}

function readLines(stream: Readable | undefined, onLine: (line: string) => void): void {
  if (!stream) return;
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line.trim() !== '') onLine(line);
    }
  });
}
