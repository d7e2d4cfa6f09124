/**
 * One framework process, to its end: started in its own process group (so a
 * kill takes its workers too), its own stdout and stderr kept (last 64 KiB)
 * for when it fails before reporting, stopped at once on abort or past its
 * deadline. Whatever it started that outlived it (re-parented workers) is
 * found by a mark in their environment and stopped.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { killMarked, killTree } from '../process-tree.js';
import type { RunAsUser } from '../run-as.js';
import { openCage, type Cage, type Containment } from '../containment.js';
import { TailBuffer } from '../tail-buffer.js';
import type { FrameworkInstall } from './locate.js';

const MARK_ENV = 'RUNSET_FRAMEWORK_MARK';

export interface FrameworkExit {
  code: number | null;
  signal: string | null;
  /** Its own output, the last 64 KiB. */
  log: string;
  /** Why runset stopped it, when it did. */
  stopped?: 'aborted' | 'deadline';
}

export interface FrameworkProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  runAs?: RunAsUser;
  /** How everything it starts is ended with it (../containment.ts). */
  containment?: Containment;
  signal?: AbortSignal;
  /** Stopped after this long. */
  deadlineMs: number;
}

export function runFramework(install: FrameworkInstall, args: readonly string[], opts: FrameworkProcessOptions): Promise<FrameworkExit> {
  const log = new TailBuffer();
  const mark = randomUUID();
  return new Promise((resolve) => {
    let stopped: FrameworkExit['stopped'];
    let cage: Cage | undefined;
    let child: ChildProcess;
    try {
      cage = install.program === undefined ? openCage(opts.containment, opts.runAs, process.execPath, [install.cli, ...args]) : openCage(opts.containment, opts.runAs, install.program, args);
      child = cage.spawn({
        cwd: opts.cwd,
        env: { ...opts.env, [MARK_ENV]: mark },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      void cage?.end();
      resolve({ code: null, signal: null, log: `cannot start it: ${(error as Error).message}\n` });
      return;
    }
    const caged = cage;
    const running = () => child.exitCode === null && child.signalCode === null;
    const stop = (why: NonNullable<FrameworkExit['stopped']>) => {
      stopped ??= why;
      if (child.pid !== undefined && running()) killTree(child.pid);
    };
    const onAbort = () => stop('aborted');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();
    const timer = setTimeout(() => stop('deadline'), opts.deadlineMs);
    child.stdout?.on('data', (chunk: Buffer) => log.write(chunk));
    child.stderr?.on('data', (chunk: Buffer) => log.write(chunk));
    let settled = false;
    const settle = (code: number | null, signal: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      killMarked(MARK_ENV, mark);
      void caged.end().then(() => resolve({ code, signal, log: log.toString(), ...(stopped ? { stopped } : {}) }));
    };
    child.on('error', (error) => {
      log.write(`cannot start it: ${error.message}\n`);
      settle(null, null);
    });
    // Its pipes may stay open in a grandchild: the exit is enough, after a short drain.
    child.on('exit', (code, signal) => setTimeout(() => settle(code, signal), 2000).unref());
    child.on('close', (code, signal) => settle(code, signal));
  });
}
