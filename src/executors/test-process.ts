/**
 * One process of a listed entry's share (a Playwright runner, a framework run
 * or listing), to its end, the same way for every kind: born in its
 * containment (./containment.ts) in its own process group (so a kill takes its
 * workers and browsers too, and signals aimed at runset's group never reach
 * it), its own stdout and stderr kept (last 64 KiB) for when it fails before
 * reporting, its reporter's event file (./event-log.ts) read to its end before
 * the exit is handed on, stopped at once on abort or past a deadline when
 * asked. Whatever it started that outlived it (re-parented workers, a
 * webServer, browsers) is found by a mark in their environment and stopped.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { killMarked, killTree } from './process-tree.js';
import type { RunAsUser } from './run-as.js';
import { openCage, type Cage, type Containment } from './containment.js';
import { TailBuffer } from './tail-buffer.js';
import type { EventLog } from './event-log.js';

/**
 * The time a runner process (Playwright's, a framework's) gets to load its
 * config and runset's reporter before its first word (the reporter's `ready`),
 * on top of its cases' own timeouts in a share's deadline. Loading a framework
 * and its config takes seconds even on a busy machine: one silent past this is
 * stuck starting (a config waiting on stdin or a port, an ES module config that
 * never settles, a hung loader).
 */
export const PROCESS_START_MS = 60_000;

/** After the process exits, how long its pipes may stay open (a grandchild holding them) before we stop waiting. */
const DRAIN_MS = 2000;

export interface TestProcessExit {
  code: number | null;
  signal: string | null;
  /** Its own stdout and stderr, the last 64 KiB (not its tests' when a reporter sends those as events). */
  log: string;
  /** Why runset stopped it, when it did through `signal` or `deadlineMs`. */
  stopped?: 'aborted' | 'deadline';
}

export interface TestProcessOptions {
  /** What it is called in "cannot start …" (Playwright; a framework's: it). */
  name: string;
  /** The variable of its environment that marks every process it starts, for the sweep at its end. */
  markEnv: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The OS user it runs as (--run-as); undefined: this process's. */
  runAs?: RunAsUser;
  /** How everything it starts is ended with it (./containment.ts). */
  containment?: Containment;
  /** Its reporter's event file, already followed: read to its end once the process is gone, before its exit is handed on. */
  events?: Pick<EventLog<unknown>, 'close'>;
  /** Called just before it starts; what it throws is a process that could not start. */
  beforeStart?: () => void;
  /** Stopped at once when this aborts (`stopped: 'aborted'`). */
  signal?: AbortSignal;
  /** Stopped after this long (`stopped: 'deadline'`). */
  deadlineMs?: number;
}

/** Runs `program` with `args` to its end: Node and a CLI for an npm package's program, else the program itself (pytest's interpreter). */
export function runTestProcess(program: string, args: readonly string[], opts: TestProcessOptions): Promise<TestProcessExit> {
  const log = new TailBuffer();
  const mark = randomUUID();
  let cage: Cage | undefined;
  let child: ChildProcess;
  try {
    opts.beforeStart?.();
    cage = openCage(opts.containment, opts.runAs, program, args);
    // Under --run-as it, its workers and browsers are that user's.
    child = cage.spawn({ cwd: opts.cwd, env: { ...opts.env, [opts.markEnv]: mark }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    void cage?.end();
    opts.events?.close();
    return Promise.resolve({ code: null, signal: null, log: `cannot start ${opts.name}: ${(error as Error).message}\n` });
  }
  const caged = cage;
  const running = () => child.exitCode === null && child.signalCode === null;
  // Only while it runs: once reaped, its pid may belong to someone else.
  const kill = () => {
    if (child.pid !== undefined && running()) killTree(child.pid);
  };
  child.stdout?.on('data', (chunk: Buffer) => log.write(chunk));
  child.stderr?.on('data', (chunk: Buffer) => log.write(chunk));
  return new Promise<TestProcessExit>((resolve) => {
    let stopped: TestProcessExit['stopped'];
    const stop = (why: NonNullable<TestProcessExit['stopped']>) => {
      stopped ??= why;
      kill();
    };
    const onAbort = () => stop('aborted');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();
    const deadline = opts.deadlineMs === undefined ? undefined : setTimeout(() => stop('deadline'), opts.deadlineMs);
    let drain: NodeJS.Timeout | undefined;
    let settled = false;
    const settle = (code: number | null, signal: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(drain);
      clearTimeout(deadline);
      opts.signal?.removeEventListener('abort', onAbort);
      // Killed outright (SIGKILL, out of memory) it cannot stop what it started, which is
      // re-parented out of its tree: whatever still carries its mark is stopped here.
      killMarked(opts.markEnv, mark);
      opts.events?.close(); // every event its reporter wrote is handed on before the exit is
      void caged.end().then(() => resolve({ code, signal, log: log.toString(), ...(stopped ? { stopped } : {}) }));
    };
    child.on('error', (error) => {
      log.write(`cannot start ${opts.name}: ${error.message}\n`);
      settle(null, null);
    });
    // Its pipes may stay open in a grandchild: the exit is enough, after a short drain.
    child.on('exit', (code, signal) => {
      drain = setTimeout(() => settle(code, signal), DRAIN_MS);
      drain.unref();
    });
    child.on('close', (code, signal) => settle(code, signal));
  });
}
