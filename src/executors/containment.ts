/**
 * Containment: a test owns nothing after it ends. Every process a test
 * process started — however it detached (`setsid … &`, a daemon's double
 * fork) — ends when that test process's run ends.
 *
 * Two mechanisms, chosen once when a worker starts (detectContainment) and
 * named in its start log:
 * - `cgroup`: cgroup v2 (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on a
 *   hybrid machine). A test process runs in a cgroup under `<mount>/runset/`
 *   that holds nothing else. It is born there: the process that spawns it
 *   moves itself into the cgroup, forks the test (a child starts in its
 *   parent's cgroup), and moves itself back before it does anything else
 *   (bornIn). So no instruction of the test ever runs outside the cgroup, and
 *   a child cannot leave a cgroup without root. At the end, `cgroup.kill`
 *   SIGKILLs everything in it at once, and the cgroup is handed to the next
 *   test only once the kernel says it is empty (`populated 0`): one cgroup per
 *   test running at once (a worker slot), made once, never shared by two tests,
 *   never reused while anything of the last test is left in it. Needs root (or
 *   a delegated cgroup) and a kernel with `cgroup.kill` (5.14).
 * - `process-group`, where that cannot be had (no cgroup v2, no write access,
 *   an older kernel): the spawners' own kills (process group, process tree,
 *   environment mark) stay the only ones. A `setsid` child escapes those; under
 *   --run-as every process of the member's user is still killed when the member
 *   ends (./test-users.ts), which does catch it.
 *
 * Until 2026-11-29 each test process got a new cgroup, joined by a `sh`
 * wrapper (`echo $$ > cgroup.procs; exec test`) and removed at its end: the
 * extra `exec` of `sh` cost the claim loop about 3 ms of wall time a command
 * (bench/README.md, "Issue 40 item 3"). Moving the spawner in and out costs two
 * writes, a tenth of a millisecond.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { killQuietly } from './process-tree.js';
import { spawnAs, type RunAsUser, type SpawnAs } from './run-as.js';

/** How test processes are contained; plain data, so that it travels to the command launcher. */
export type Containment =
  /** `root`: the cgroup v2 folder under which each running test process gets a cgroup of its own. */
  | { kind: 'cgroup'; root: string }
  /** `why`: what kept cgroups out of reach. */
  | { kind: 'process-group'; why: string };

/** What a cage's spawn takes: child_process's options, but the user is the cage's. */
export type CageSpawnOptions = Omit<SpawnOptions, 'uid' | 'gid'>;

/** One test process's containment: how to start it, and how to end everything it started. */
export interface Cage {
  /** The program the test process is (as `user`: `uid`/`gid`, or `setpriv` for supplementary groups). */
  readonly start: SpawnAs;
  /** Starts `start` inside the cage (once). Throws as child_process's spawn does, or when the cage cannot be entered. */
  spawn(options: CageSpawnOptions): ChildProcess;
  /** Kills every process in it and waits (a bounded while) for them to be gone; only then may it serve another test. */
  end(): Promise<void>;
}

/** How long end() waits for a killed cgroup to empty. */
const EMPTY_WAIT_MS = 2000;

let seq = 0;
/** This process's cgroups: those free (empty, for the next test) and every one it made (removed when it exits). */
const free = new Map<string, string[]>();
const made = new Set<string>();
let removing = false;

/** One line for a worker's start log. */
export function describeContainment(c: Containment): string {
  return c.kind === 'cgroup'
    ? `cgroup v2 (${c.root}): each test's processes are killed together when it ends, detached ones too`
    : `process groups only (${c.why}): a test's detached (setsid) processes are not ended with it unless --run-as is used`;
}

/**
 * What this machine allows, tried for real: a cgroup made under the cgroup v2
 * mount's `runset/`, this process moved into it and back. Leftover cgroups of
 * runset processes that died are emptied and removed on the way.
 */
export function detectContainment(mountinfo = '/proc/self/mountinfo'): Containment {
  if (process.platform !== 'linux') return { kind: 'process-group', why: 'not Linux' };
  const mount = cgroup2Mount(mountinfo);
  if (!mount) return { kind: 'process-group', why: 'no cgroup v2 mounted' };
  const root = path.join(mount, 'runset');
  try {
    mkdirSync(root, { recursive: true });
    sweepStale(root);
    const probe = path.join(root, `probe-${process.pid}`);
    mkdirSync(probe, { recursive: true });
    try {
      if (!existsSync(path.join(probe, 'cgroup.kill'))) return { kind: 'process-group', why: 'this kernel has no cgroup.kill (Linux 5.14)' };
      const inside = bornIn(probe, () => ownCgroup(root));
      if (inside !== probe) return { kind: 'process-group', why: `cannot move into a cgroup under ${root} (it reads ${inside})` };
    } finally {
      rmdirSync(probe);
    }
    return { kind: 'cgroup', root };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { kind: 'process-group', why: `cannot make and join a cgroup under ${root}${code ? ` (${code})` : ''}` };
  }
}

/** Where cgroup v2 is mounted (`/sys/fs/cgroup` on a pure v2 machine), from mountinfo. */
function cgroup2Mount(mountinfo: string): string | undefined {
  try {
    for (const line of readFileSync(mountinfo, 'utf8').split('\n')) {
      const [before, after] = line.split(' - ');
      if (after?.startsWith('cgroup2 ')) return before?.split(' ')[4];
    }
  } catch {
    // no /proc
  }
  return undefined;
}

/** Cgroups `t-<pid>-<n>` whose runset process is gone: kill what is left in them, remove them. */
function sweepStale(root: string): void {
  for (const entry of readdirSync(root)) {
    const pid = Number(/^(?:t|probe)-(\d+)/.exec(entry)?.[1]);
    if (!pid || existsSync(`/proc/${pid}`)) continue;
    try {
      writeFileSync(path.join(root, entry, 'cgroup.kill'), '1');
      rmdirSync(path.join(root, entry));
    } catch {
      // still emptying: the next start removes it
    }
  }
}

/** This process's cgroup v2 folder, under the mount `root` is in. */
function ownCgroup(root: string): string {
  const relative = /^0::(\/.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
  if (relative === undefined) throw new Error('no cgroup v2 line in /proc/self/cgroup');
  return path.join(path.dirname(root), relative);
}

/**
 * Runs `fork` (which must start its process synchronously, as spawn does)
 * with this whole process moved into `cgroup`: what it starts is born there.
 * Nothing else runs in between (JavaScript is single-threaded here; no other
 * thread of Node forks), and this process is back in its own cgroup before it
 * returns: a cgroup.kill aimed at the test can never reach it.
 */
function bornIn<T>(cgroup: string, fork: () => T): T {
  const home = path.join(ownCgroup(path.dirname(cgroup)), 'cgroup.procs');
  // A way back first (a cgroup namespace can hide this process's own): never move in without one.
  if (!existsSync(home)) throw new Error(`this process's cgroup (${path.dirname(home)}) is not under ${path.dirname(path.dirname(cgroup))}`);
  writeFileSync(path.join(cgroup, 'cgroup.procs'), '0'); // 0: the writer's own process, every thread of it
  try {
    return fork();
  } finally {
    writeFileSync(home, '0');
  }
}

/**
 * A cage for one test process: `file args` as `user` (this process's user without one).
 * Throws when no cgroup can be had: a test is not run uncontained.
 */
export function openCage(c: Containment | undefined, user: RunAsUser | undefined, file: string, args: readonly string[]): Cage {
  const start = spawnAs(user, file, args);
  const launch = (options: CageSpawnOptions): ChildProcess => spawn(start.file, start.args, { ...options, uid: start.uid, gid: start.gid });
  if (c?.kind !== 'cgroup') return { start, spawn: launch, end: () => Promise.resolve() };
  const dir = takeCgroup(c.root);
  let ended: Promise<void> | undefined;
  return {
    start,
    spawn: (options) => {
      let child: ChildProcess | undefined;
      try {
        return bornIn(dir, () => (child = launch(options)));
      } catch (error) {
        // Not back home (bornIn's way out failed): the test must not run on in a cage this process shares.
        if (child?.pid !== undefined) {
          killQuietly(-child.pid);
          killQuietly(child.pid);
        }
        throw error;
      }
    },
    end: () => (ended ??= endCgroup(c.root, dir)),
  };
}

/** A free cgroup of this process under `root`, else a new one. */
function takeCgroup(root: string): string {
  const reused = free.get(root)?.pop();
  if (reused !== undefined) return reused;
  const dir = path.join(root, `t-${process.pid}-${++seq}`);
  mkdirSync(dir);
  if (!removing) process.once('exit', removeMade);
  removing = true;
  made.add(dir);
  return dir;
}

/** The cage's end: everything in the cgroup killed; the cgroup free again once the kernel says it is empty. */
async function endCgroup(root: string, dir: string): Promise<void> {
  try {
    if (populated(dir)) {
      // Never this process itself (stranded in it by a failed move back): it would kill the worker.
      if (holdsThisProcess(dir)) return;
      writeFileSync(path.join(dir, 'cgroup.kill'), '1');
      for (const deadline = Date.now() + EMPTY_WAIT_MS; populated(dir); ) {
        if (Date.now() >= deadline) return; // still emptying: never handed to another test
        await sleep(5);
      }
    }
    const list = free.get(root) ?? [];
    list.push(dir);
    free.set(root, list);
  } catch {
    // Gone (removed by hand): a new one is made for the next test.
    made.delete(dir);
  }
}

function populated(dir: string): boolean {
  return /^populated 1$/m.test(readFileSync(path.join(dir, 'cgroup.events'), 'utf8'));
}

function holdsThisProcess(dir: string): boolean {
  return readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').includes(String(process.pid));
}

/** At exit: whatever this process's tests still run is killed, and its cgroups removed (a later start's sweep removes those still emptying). */
function removeMade(): void {
  for (const dir of made) {
    try {
      if (populated(dir) && !holdsThisProcess(dir)) writeFileSync(path.join(dir, 'cgroup.kill'), '1');
      rmdirSync(dir);
    } catch {
      // still emptying, or gone
    }
  }
}
