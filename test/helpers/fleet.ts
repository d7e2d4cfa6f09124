/**
 * A "fleet" for scale tests: API-only and worker-only `runset` processes on one
 * PostgreSQL schema, spawned from the real CLI, plus the leak check that every
 * such test ends with.
 *
 * Every process of a fleet carries `SCALE_FLEET=<tag>` in its environment, and
 * workers hand their environment on to `command` members (only RUNSET_* is
 * stripped), so the tag also marks every member process and whatever it started.
 * `teardown()` finds them all through /proc, kills what is left and fails the
 * test that left it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { CLI } from './server.js';

export interface FleetOptions {
  databaseUrl: string;
  schema: string;
  configPath: string;
  apiKey: string;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One spawned `runset serve --no-workers` or `runset worker`. */
export class RunsetProcess {
  readonly exited: Promise<ProcessExit>;
  private output = '';

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    proc.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
    this.exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  }

  get pid(): number {
    if (this.proc.pid === undefined) throw new Error(`${this.name} has no pid`);
    return this.proc.pid;
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  logs(): string {
    return this.output;
  }

  signal(signal: NodeJS.Signals): void {
    if (this.running) this.proc.kill(signal);
  }

  /** Sends `signal` and waits for the exit (at most `withinMs`, then SIGKILL and throw). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', withinMs = 15_000): Promise<ProcessExit> {
    if (!this.running) return this.exited;
    this.proc.kill(signal);
    const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), withinMs).unref());
    const first = await Promise.race([this.exited, timer]);
    if (first === 'late') {
      this.proc.kill('SIGKILL');
      await this.exited;
      throw new Error(`${this.name} did not exit within ${withinMs}ms of ${signal}:\n${this.logs()}`);
    }
    return first;
  }

  /** Resolves with the first match of `pattern` in the output; rejects on exit or after `withinMs`. */
  waitForOutput(pattern: RegExp, withinMs = 15_000): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const m = pattern.exec(this.output);
        if (!m) return false;
        cleanup();
        resolve(m);
        return true;
      };
      const onData = (): void => void check();
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${this.name}: no ${String(pattern)} within ${withinMs}ms:\n${this.output}`));
      }, withinMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.proc.stdout?.off('data', onData);
        this.proc.stderr?.off('data', onData);
      };
      if (check()) return;
      this.proc.stdout?.on('data', onData);
      this.proc.stderr?.on('data', onData);
      void this.exited.then(({ code, signal }) => {
        if (check()) return;
        cleanup();
        reject(new Error(`${this.name} exited (${code ?? signal}) before printing ${String(pattern)}:\n${this.output}`));
      });
    });
  }
}

export interface ApiProcess extends RunsetProcess {
  url: string;
  apiKey: string;
}

export interface WorkerProcess extends RunsetProcess {
  workerId: string;
}

export interface SpawnOptions {
  /** Extra CLI flags (`--lease 1s`, …). */
  args?: string[];
  /** Extra environment, e.g. SCALE_MARK for the members this worker runs. */
  env?: Record<string, string>;
}

export class Fleet {
  /** Marks every process of this fleet (and their members) in /proc/<pid>/environ. */
  readonly tag = `${process.pid}-${randomBytes(6).toString('hex')}`;
  private readonly procs: RunsetProcess[] = [];
  private count = 0;

  constructor(readonly opts: FleetOptions) {}

  private spawnCli(name: string, command: string[], extra: SpawnOptions): RunsetProcess {
    const { databaseUrl, schema, configPath } = this.opts;
    const proc = spawn(
      process.execPath,
      [CLI, ...command, '--database-url', databaseUrl, '--database-schema', schema, '--config', configPath, ...(extra.args ?? [])],
      {
        env: {
          ...process.env,
          RUNSET_LOG_LEVEL: 'warn',
          RUNSET_BOOTSTRAP_KEY: this.opts.apiKey,
          RUNSET_SETS_PER_MINUTE: '100000',
          ...extra.env,
          SCALE_FLEET: this.tag,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const child = new RunsetProcess(name, proc);
    this.procs.push(child);
    return child;
  }

  /**
   * How long a process may take to start: as long as startRunset (server.ts) gives
   * one. Several starting together on a loaded machine (2 cores at a load of 8)
   * took over 15 s to listen.
   */
  static readonly START_WITHIN_MS = 45_000;

  /** `runset serve --no-workers`: resolves once it prints where the API is. */
  async api(extra: SpawnOptions = {}): Promise<ApiProcess> {
    const child = this.spawnCli(`api#${++this.count}`, ['serve', '--no-workers', '--port', '0'], extra);
    const m = await child.waitForOutput(/API at (http:\/\/\S+\/api)/, Fleet.START_WITHIN_MS);
    return Object.assign(child, { url: m[1]!, apiKey: this.opts.apiKey });
  }

  /** `runset worker --workers N`: resolves once it prints its worker id. */
  async worker(slots: number, extra: SpawnOptions = {}): Promise<WorkerProcess> {
    const child = this.spawnCli(`worker#${++this.count}`, ['worker', '--workers', String(slots)], extra);
    const m = await child.waitForOutput(/worker (\S+) with \d+ slot/, Fleet.START_WITHIN_MS);
    return Object.assign(child, { workerId: m[1]! });
  }

  /**
   * After-hook: every process of the fleet must be gone. Processes the test left
   * running are killed and reported; stray members (tagged processes) get
   * `graceMs` to end by themselves first — a worker killed with SIGKILL cannot
   * stop its in-flight members, which then run to their end.
   */
  async teardown(graceMs = 1000): Promise<void> {
    const leaked: string[] = [];
    for (const p of this.procs) {
      if (!p.running) continue;
      leaked.push(`${p.name} (pid ${p.pid})`);
      p.signal('SIGCONT');
      p.signal('SIGKILL');
      await p.exited;
    }
    const until = Date.now() + graceMs;
    let strays = taggedProcesses(this.tag);
    while (strays.length > 0 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
      strays = taggedProcesses(this.tag);
    }
    for (const s of strays) {
      leaked.push(`member process ${s.pid} (${s.cmdline})`);
      try {
        process.kill(s.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (leaked.length > 0) throw new Error(`the test left processes running: ${leaked.join(', ')}`);
  }
}

/** Live (not zombie) processes whose environment holds SCALE_FLEET=<tag>. */
export function taggedProcesses(tag: string): Array<{ pid: number; cmdline: string }> {
  const needle = `SCALE_FLEET=${tag}`;
  const found: Array<{ pid: number; cmdline: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
      if (!environ.split('\0').includes(needle)) continue;
      if (!pidAlive(pid)) continue;
      found.push({ pid, cmdline: readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim() });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** Alive = exists and is not a zombie waiting for a reaper (containers may lack one). */
export function pidAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
