/**
 * The Playwright runner as a child process: started in its own process group,
 * its reporter's events followed in the event file (../event-log.ts) line by
 * line, its own stdout/stderr kept (last 64 KiB) for when it fails before
 * reporting anything.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { killMarked, killTree } from '../process-tree.js';
import type { RunAsUser } from '../run-as.js';
import { openCage, type Cage, type Containment } from '../containment.js';
import { TailBuffer } from '../tail-buffer.js';
import { EventLog } from '../event-log.js';
import { REPORTER_FILE_ENV, type ReporterEvent } from './reporter.js';

/** After the runner exits, how long its pipes may stay open (a grandchild holding them) before we stop waiting. */
const DRAIN_MS = 2000;
/** In the runner's environment, so every process it starts carries it: see the sweep below. */
const BATCH_MARK_ENV = 'RUNSET_BATCH_MARK';

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
  opts: {
    cwd: string;
    env: NodeJS.ProcessEnv;
    eventFile: string;
    onEvent: (event: ReporterEvent) => void;
    /** The OS user the runner runs as (--run-as); undefined: this process's. */
    runAs?: RunAsUser;
    /** How everything it starts is ended with it (../containment.ts). */
    containment?: Containment;
    /** Called once the event file exists, just before the runner starts. */
    beforeStart?: () => void;
  },
): RunnerProcess {
  const log = new TailBuffer();
  let child: ChildProcess;
  let cage: Cage | undefined;
  let events: EventLog<ReporterEvent>;
  const mark = randomUUID();
  try {
    events = new EventLog(opts.eventFile, opts.onEvent);
  } catch (error) {
    const message = `cannot make the reporter's event file ${opts.eventFile}: ${(error as Error).message}`;
    return { pid: undefined, done: Promise.resolve({ code: null, signal: null, log: message }), kill: () => undefined };
  }
  try {
    opts.beforeStart?.();
    cage = openCage(opts.containment, opts.runAs, process.execPath, [cli, ...args]);
    // Under --run-as the runner, its workers and browsers are that user's.
    child = cage.spawn({
      cwd: opts.cwd,
      env: { ...opts.env, [REPORTER_FILE_ENV]: opts.eventFile, [BATCH_MARK_ENV]: mark },
      detached: true, // its own process group, so signals aimed at runset's group never reach it by accident
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    void cage?.end();
    events.close();
    const message = `cannot start Playwright: ${(error as Error).message}`;
    return { pid: undefined, done: Promise.resolve({ code: null, signal: null, log: message }), kill: () => undefined };
  }
  const caged = cage;
  const running = () => child.exitCode === null && child.signalCode === null;
  child.stdout?.on('data', (chunk: Buffer) => log.write(chunk));
  child.stderr?.on('data', (chunk: Buffer) => log.write(chunk));
  const done = new Promise<RunnerExit>((resolve) => {
    let drain: NodeJS.Timeout | undefined;
    const settle = (code: number | null, signal: string | null) => {
      clearTimeout(drain);
      // Playwright stops its webServer and browsers when it exits or crashes; killed
      // outright (SIGKILL, out of memory) it cannot, and they are re-parented out of
      // its tree: whatever still carries this batch's mark is stopped here.
      killMarked(BATCH_MARK_ENV, mark);
      events.close(); // every event the reporter wrote is handed on before the exit is
      void caged.end().then(() => resolve({ code, signal, log: log.toString() }));
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

