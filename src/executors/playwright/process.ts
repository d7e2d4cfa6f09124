/**
 * The Playwright runner as a child process: started in its own process group,
 * its reporter's events followed in the event file (./event-log.ts) line by
 * line, its own stdout/stderr kept (last 64 KiB) for when it fails before
 * reporting anything.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { DescendantWatch, killTree } from '../process-tree.js';
import { TailBuffer } from '../tail-buffer.js';
import { EventLog } from './event-log.js';
import { REPORTER_FILE_ENV, type ReporterEvent } from './reporter.js';

/** After the runner exits, how long its pipes may stay open (a grandchild holding them) before we stop waiting. */
const DRAIN_MS = 2000;
/** How often the runner's descendants (workers, browsers, webServer) are noted, for the sweep after it exits. */
const LOOK_MS = 1000;

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
  opts: { cwd: string; env: NodeJS.ProcessEnv; eventFile: string; onEvent: (event: ReporterEvent) => void },
): RunnerProcess {
  const log = new TailBuffer();
  let child: ChildProcess;
  let events: EventLog;
  try {
    events = new EventLog(opts.eventFile, opts.onEvent);
  } catch (error) {
    const message = `cannot make the reporter's event file ${opts.eventFile}: ${(error as Error).message}`;
    return { pid: undefined, done: Promise.resolve({ code: null, signal: null, log: message }), kill: () => undefined };
  }
  try {
    child = spawn(process.execPath, [cli, ...args], {
      cwd: opts.cwd,
      env: { ...opts.env, [REPORTER_FILE_ENV]: opts.eventFile },
      detached: true, // its own process group, so signals aimed at runset's group never reach it by accident
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    events.close();
    const message = `cannot start Playwright: ${(error as Error).message}`;
    return { pid: undefined, done: Promise.resolve({ code: null, signal: null, log: message }), kill: () => undefined };
  }
  const running = () => child.exitCode === null && child.signalCode === null;
  // Playwright stops its webServer and browsers when it exits normally, or crashes;
  // killed outright (SIGKILL, out of memory) it cannot: they are swept after it.
  const descendants = child.pid === undefined ? undefined : new DescendantWatch(child.pid);
  const looking = setInterval(() => descendants?.look(), LOOK_MS);
  child.stdout?.on('data', (chunk: Buffer) => log.write(chunk));
  child.stderr?.on('data', (chunk: Buffer) => log.write(chunk));
  const done = new Promise<RunnerExit>((resolve) => {
    let drain: NodeJS.Timeout | undefined;
    const settle = (code: number | null, signal: string | null) => {
      clearTimeout(drain);
      clearInterval(looking);
      descendants?.killSurvivors();
      events.close(); // every event the reporter wrote is handed on before the exit is
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

