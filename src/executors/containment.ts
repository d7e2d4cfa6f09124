/**
 * Containment: a test owns nothing after it ends. Every process a test
 * process started — however it detached (`setsid … &`, a daemon's double
 * fork) — ends when that test process's run ends.
 *
 * Two mechanisms, chosen once when a worker starts (detectContainment) and
 * named in its start log:
 * - `cgroup`: cgroup v2 (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on a
 *   hybrid machine). Each test process gets a cgroup of its own under
 *   `<mount>/runset/`. It is started through `sh`, which writes its own pid
 *   into the cgroup before it execs the test (dropping to the --run-as user
 *   with `setpriv` only after that), so nothing the test starts is ever outside
 *   it; a child cannot leave a cgroup without root. At the end, `cgroup.kill`
 *   SIGKILLs everything in it at once, and the cgroup is removed once empty.
 *   Needs root (or a delegated cgroup) and a kernel with `cgroup.kill` (5.14).
 * - `process-group`, where that cannot be had (no cgroup v2, no write access,
 *   an older kernel): the spawners' own kills (process group, process tree,
 *   environment mark) stay the only ones. A `setsid` child escapes those; under
 *   --run-as every process of the member's user is still killed when the member
 *   ends (./test-users.ts), which does catch it.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { setprivPath, spawnAs, type RunAsUser, type SpawnAs } from './run-as.js';

/** How test processes are contained; plain data, so that it travels to the command launcher. */
export type Containment =
  /** `root`: the cgroup v2 folder under which each test process gets a cgroup of its own. */
  | { kind: 'cgroup'; root: string }
  /** `why`: what kept cgroups out of reach. */
  | { kind: 'process-group'; why: string };

/** One test process's containment: how to start it, and how to end everything it started. */
export interface Cage {
  readonly start: SpawnAs;
  /** Kills every process in it, waits (a bounded while) for them to be gone, and removes it. */
  end(): Promise<void>;
}

const SH = '/bin/sh';
/** Joins the cgroup whose cgroup.procs is $0, then becomes the test: nothing runs outside it. */
const JOIN = 'echo $$ > "$0" || exit 126; exec "$@"';
/** How long end() waits for a killed cgroup to empty. */
const EMPTY_WAIT_MS = 2000;

let seq = 0;

/** One line for a worker's start log. */
export function describeContainment(c: Containment): string {
  return c.kind === 'cgroup'
    ? `cgroup v2 (${c.root}): each test's processes are killed together when it ends, detached ones too`
    : `process groups only (${c.why}): a test's detached (setsid) processes are not ended with it unless --run-as is used`;
}

/**
 * What this machine allows, tried for real: a cgroup made under the cgroup v2
 * mount's `runset/`, a shell moved into it. Leftover cgroups of runset
 * processes that died are emptied and removed on the way.
 */
export function detectContainment(runAs?: RunAsUser, mountinfo = '/proc/self/mountinfo'): Containment {
  if (process.platform !== 'linux') return { kind: 'process-group', why: 'not Linux' };
  // Inside the cgroup the wrapper drops to the user with setpriv (it must join as root first).
  if (runAs && setprivPath() === undefined) return { kind: 'process-group', why: 'no setpriv (util-linux) to become the --run-as user inside a cgroup' };
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
      accessSync(SH, constants.X_OK);
      execFileSync(SH, ['-c', JOIN, path.join(probe, 'cgroup.procs'), 'true'], { stdio: 'ignore' });
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

/**
 * A cage for one test process: `file args` as `user` (this process's user without one).
 * Throws when the cgroup cannot be made: a test is not run uncontained.
 */
export function openCage(c: Containment | undefined, user: RunAsUser | undefined, file: string, args: readonly string[]): Cage {
  if (c?.kind !== 'cgroup') return { start: spawnAs(user, file, args), end: () => Promise.resolve() };
  const dir = path.join(c.root, `t-${process.pid}-${++seq}`);
  mkdirSync(dir);
  const test = user ? [setprivPath() ?? 'setpriv', ...setprivIds(user), '--', file, ...args] : [file, ...args];
  return { start: { file: SH, args: ['-c', JOIN, path.join(dir, 'cgroup.procs'), ...test] }, end: () => endCgroup(dir) };
}

function setprivIds(user: RunAsUser): string[] {
  const groups = user.groups.length > 0 ? `--groups=${user.groups.join(',')}` : '--clear-groups';
  return [`--reuid=${user.uid}`, `--regid=${user.gid}`, groups];
}

async function endCgroup(dir: string): Promise<void> {
  try {
    if (populated(dir)) writeFileSync(path.join(dir, 'cgroup.kill'), '1');
    for (const deadline = Date.now() + EMPTY_WAIT_MS; populated(dir) && Date.now() < deadline; ) await sleep(5);
    rmdirSync(dir);
  } catch {
    // Still emptying after the wait, or already gone: sweepStale removes it on a later start.
  }
}

function populated(dir: string): boolean {
  return /^populated 1$/m.test(readFileSync(path.join(dir, 'cgroup.events'), 'utf8'));
}
