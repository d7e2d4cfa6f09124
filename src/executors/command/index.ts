/**
 * The `command` executor: runs an argv (never a shell), passes when it exits 0.
 *
 * - Variables arrive as environment variables; the worker's settings and
 *   credentials are not handed to test code (../environment.ts), and under
 *   --run-as the command runs as that user (../run-as.ts).
 * - The command leads its own process group (`detached`), so stopping it —
 *   on abort, or when it ends — reaches everything it started: a test must
 *   not leave a `server &` or a stuck browser behind on the worker.
 * - stdout and stderr are kept interleaved, in arrival order, last 64 KiB.
 * - Commands are started by a small helper process, not the worker (./launcher.ts:
 *   spawning from a big process is slow); `runCommand` is what it runs.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { CommandTestSpec, ExecutionContext, ExecutionResult, Executor } from '../../core/types.js';
import { abortMessage } from '../abort.js';
import { TailBuffer } from '../tail-buffer.js';
import { memberPolicy, suiteEnvironment, type TestProcessPolicy } from '../environment.js';
import { killQuietly } from '../process-tree.js';
import { openCage, type Cage } from '../containment.js';
import { CommandLauncher } from './launcher.js';
import { readJunitReports } from './junit.js';
import { ArtifactNames, writtenArtifacts } from '../artifact-files.js';

/**
 * After the command exits, how long to wait for its pipes to close. They stay
 * open while a background grandchild holds them; past this we stop waiting
 * (and the grandchild is killed with the group) instead of hanging.
 */
const DRAIN_MS = 100;

/** A command executor whose commands follow `policy` (whom they run as, what they must not see). */
export function createCommandExecutor(policy: TestProcessPolicy = {}): Executor<CommandTestSpec> {
  const launcher = new CommandLauncher(policy, (spec, ctx) => runCommand(spec, ctx, memberPolicy(policy, ctx.runAs)));
  return Object.freeze({
    type: 'command' as const,
    run: (spec: CommandTestSpec, ctx: ExecutionContext) => (spec.junit === undefined && spec.artifacts === undefined ? launcher.run(spec, ctx) : withFiles(spec, ctx, launcher)),
  });
}

export const commandExecutor = createCommandExecutor();

/**
 * The command's result with what it wrote since it started: the cases of its
 * JUnit reports (`junit:`, ./junit.ts) and its files (`artifacts:`,
 * ../artifact-files.ts). What cannot be read is noted in its output.
 */
async function withFiles(spec: CommandTestSpec, ctx: ExecutionContext, launcher: CommandLauncher): Promise<ExecutionResult> {
  const since = Date.now();
  const result = await launcher.run(spec, ctx);
  if (ctx.signal.aborted) return result;
  const notes: string[] = [];
  let found: Pick<ExecutionResult, 'cases' | 'artifacts'> = {};
  if (spec.junit !== undefined) {
    const { cases, notes: junitNotes } = await readJunitReports(spec.junit, spec.cwd, since);
    notes.push(...junitNotes);
    if (cases.length > 0) found = { ...found, cases };
  }
  if (spec.artifacts !== undefined) {
    try {
      const { artifacts, note } = await writtenArtifacts(spec.artifacts, spec.cwd, since, new ArtifactNames());
      if (note) notes.push(note);
      if (artifacts.length > 0) found = { ...found, artifacts };
    } catch (error) {
      notes.push(`runset: artifacts: ${(error as Error).message}`);
    }
  }
  const output = notes.length > 0 ? `${result.output}${result.output.endsWith('\n') || result.output === '' ? '' : '\n'}${notes.join('\n')}\n` : result.output;
  return { ...result, output, ...found };
}

type Verdict = [passed: boolean, error: string | null];

/**
 * Runs one command in this process (the launcher's, normally). `base` is the
 * environment its own is made from (testEnvironment): this process's unless
 * the caller holds a copy (the launcher's never changes; reading process.env
 * costs a native call a variable, about 0.1 ms a command).
 */
export function runCommand(spec: CommandTestSpec, ctx: ExecutionContext, policy: TestProcessPolicy = {}, base: NodeJS.ProcessEnv = process.env): Promise<ExecutionResult> {
  const { signal } = ctx;
  if (signal.aborted) return Promise.resolve({ passed: false, error: abortMessage(signal), output: '' });
  const [program = '', ...args] = spec.run;
  return new Promise((resolve) => {
    const output = new TailBuffer();
    let child: ChildProcess;
    let cage: Cage | undefined;
    try {
      cage = openCage(policy.containment, policy.runAs, program, args);
      child = cage.spawn({
        cwd: spec.cwd,
        env: suiteEnvironment(spec.cwd, ctx.variables, policy, base),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      // Invalid arguments (a NUL byte…) throw synchronously instead of emitting 'error'.
      void cage?.end();
      resolve({ passed: false, error: startError(program, spec.cwd, error), output: '' });
      return;
    }

    const caged = cage;
    let settled = false;
    let drainTimer: NodeJS.Timeout | undefined;
    const finish = ([passed, error]: Verdict): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      clearTimeout(drainTimer);
      killGroup(child);
      child.stdout?.destroy();
      child.stderr?.destroy();
      // Ends only once whatever the command left (a setsid child) is gone too.
      void caged.end().then(() => resolve({ passed, error, output: output.toString() }));
    };
    const onAbort = (): void => finish([false, abortMessage(signal)]);
    signal.addEventListener('abort', onAbort, { once: true });

    const collect = (chunk: Buffer): void => output.write(chunk);
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.on('error', (error) => finish([false, startError(program, spec.cwd, error)]));
    child.on('exit', (code, exitSignal) => {
      if (settled) return;
      drainTimer = setTimeout(() => finish(exitVerdict(code, exitSignal)), DRAIN_MS);
    });
    child.on('close', (code, exitSignal) => finish(exitVerdict(code, exitSignal)));
  });
}

function exitVerdict(code: number | null, signal: NodeJS.Signals | null): Verdict {
  if (code === 0) return [true, null];
  if (code !== null) return [false, `exited with code ${code}`];
  return [false, `killed by signal ${signal ?? 'unknown'}`];
}

/** Kills the command's whole process group; it may already be gone, which is fine. */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return; // never started
  killQuietly(-child.pid);
}

function startError(program: string, cwd: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const start = `cannot start ${JSON.stringify(program)}`;
  // spawn reports a missing working directory as ENOENT too: say which one is missing.
  if (code === 'ENOENT') {
    return existsSync(cwd) ? `${start}: command not found (ENOENT)` : `${start}: working directory ${cwd} does not exist (ENOENT)`;
  }
  if (code === 'EACCES') return `${start}: permission denied (EACCES)`;
  if (code === 'ENOTDIR') return `${start}: working directory ${cwd} is not a folder (ENOTDIR)`;
  const message = error instanceof Error ? error.message : String(error);
  return `${start}: ${message}${code ? ` (${code})` : ''}`;
}
