/**
 * Commands are started by a small helper process, the launcher, not by the
 * worker itself.
 *
 * Why: Node starts a program with fork + exec, and fork costs in proportion to
 * the memory of the process that calls it; after each fork, the first write to
 * every page of that process faults again. A runset worker (API, store, Fastify
 * loaded) is two to three times the size of a bare Node script, and measured
 * 1.4× a bare Node loop over 1,000 `true` commands, spawning alone taking about
 * 1.2 ms of its main thread per command (bench/README.md, bench:dispatch). The
 * launcher is a bare Node process: it spawns at the floor cost, in parallel with
 * the worker's own work (claims, outcome writes), and the worker's main thread
 * only exchanges two small messages per command.
 *
 * The launcher runs the very same `runCommand` (./index.ts): process groups,
 * output tail, drain and kill rules are unchanged. Commands inherit the
 * launcher's environment, which is the worker's as it was when the launcher
 * started, already scrubbed of the worker's settings and credentials
 * (../environment.ts): they never reach the launcher at all, so a test reading
 * its parent's /proc/<pid>/environ finds none. The launcher stays the worker's
 * user (it must, to start commands as --run-as's user); only the user's ids
 * and the containment (../containment.ts) travel with each command. The launcher exits when the worker does
 * (its IPC channel closes), killing whatever it still runs, and ignores
 * terminal signals so that a worker stopping gracefully keeps its commands. If
 * it cannot be started, commands run in the worker process as before.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CommandTestSpec, ExecutionContext, ExecutionResult } from '../../core/types.js';
import { abortMessage } from '../abort.js';
import { scrubbedEnvironment, type TestProcessPolicy } from '../environment.js';
import type { RunAsUser } from '../run-as.js';
import type { Containment } from '../containment.js';

/** An abort reason that survives the trip: a string, or an error's name and message. */
export type WireReason = string | { name: string; message: string } | null;

export type LauncherRequest =
  | { type: 'run'; id: number; spec: CommandTestSpec; variables: Readonly<Record<string, string>>; runAs: RunAsUser | undefined; containment: Containment | undefined }
  | { type: 'abort'; id: number; reason: WireReason };

/** `ready` once, when the launcher listens; then one `done` per run. */
export type LauncherReply = { type: 'ready' } | { type: 'done'; id: number; result: ExecutionResult };

interface Pending {
  spec: CommandTestSpec;
  ctx: ExecutionContext;
  settle: (result: ExecutionResult | Promise<ExecutionResult>) => void;
}

type RunHere = (spec: CommandTestSpec, ctx: ExecutionContext) => Promise<ExecutionResult>;

const ENTRY = fileURLToPath(new URL('./launcher-main.js', import.meta.url));

export function toWireReason(reason: unknown): WireReason {
  if (typeof reason === 'string') return reason;
  if (reason instanceof Error) return { name: reason.name, message: reason.message };
  return null;
}

export class CommandLauncher {
  private child: ChildProcess | undefined;
  private readonly pending = new Map<number, Pending>();
  private seq = 0;
  private ready = false;
  private broken = false;

  /** `runHere` runs a command in this process: used when no launcher can be had. */
  constructor(
    private readonly policy: TestProcessPolicy,
    private readonly runHere: RunHere,
  ) {}

  run(spec: CommandTestSpec, ctx: ExecutionContext): Promise<ExecutionResult> {
    const { signal } = ctx;
    if (signal.aborted) return Promise.resolve({ passed: false, error: abortMessage(signal), output: '' });
    const child = this.launcher();
    if (!child) return this.runHere(spec, ctx);
    const id = ++this.seq;
    return new Promise((resolve) => {
      const onAbort = (): void => {
        this.send(child, { type: 'abort', id, reason: toWireReason(signal.reason) });
      };
      const settle = (result: ExecutionResult | Promise<ExecutionResult>): void => {
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      };
      this.pending.set(id, { spec, ctx, settle });
      signal.addEventListener('abort', onAbort, { once: true });
      this.setBusy(child, true);
      if (!this.send(child, { type: 'run', id, spec, variables: ctx.variables, runAs: ctx.runAs ?? this.policy.runAs, containment: this.policy.containment })) {
        // The channel closed between the check and the send: run it here instead.
        this.pending.delete(id);
        this.setBusy(child, this.pending.size > 0);
        settle(this.runHere(spec, ctx));
      }
    });
  }

  private launcher(): ChildProcess | undefined {
    if (this.child?.connected) return this.child;
    if (this.broken) return undefined;
    let child: ChildProcess;
    try {
      child = fork(ENTRY, [], { execArgv: [], env: scrubbedEnvironment(this.policy), serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    } catch {
      this.broken = true;
      return undefined;
    }
    let ready = false;
    child.on('message', (reply: LauncherReply) => {
      if (reply.type === 'ready') {
        ready = this.ready = true;
        return;
      }
      const pending = this.pending.get(reply.id);
      if (!pending) return;
      this.pending.delete(reply.id);
      pending.settle(reply.result);
      if (this.pending.size === 0) this.setBusy(child, false);
    });
    child.on('error', () => undefined); // a failed send; 'exit' settles what was pending
    child.on('exit', (code, exitSignal) => {
      if (this.child === child) this.child = undefined;
      const left = [...this.pending.values()];
      this.pending.clear();
      if (!ready) {
        // It never got going (a broken install, no IPC): nothing it was sent has started.
        // Run those here, and everything else from now on if no launcher ever worked.
        if (!this.ready) this.broken = true;
        for (const p of left) p.settle(this.runHere(p.spec, p.ctx));
        return;
      }
      const why = `the command launcher exited (${exitSignal ?? `code ${code}`}) while the command ran; its outcome is unknown`;
      for (const p of left) p.settle({ passed: false, error: why, output: '' });
    });
    this.child = child;
    this.setBusy(child, false);
    return child;
  }

  private send(child: ChildProcess, message: LauncherRequest): boolean {
    if (!child.connected) return false;
    try {
      child.send(message); // false only means "queued": it still goes
      return true;
    } catch {
      return false;
    }
  }

  /** An idle launcher must not keep this process alive (tests, one-shot CLIs). */
  private setBusy(child: ChildProcess, busy: boolean): void {
    const channel = child.channel as { ref?: () => void; unref?: () => void } | null | undefined;
    if (busy) {
      child.ref();
      channel?.ref?.();
    } else {
      child.unref();
      channel?.unref?.();
    }
  }
}
