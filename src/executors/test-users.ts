/**
 * A user per slot under `--run-as USER`: tests running at once on one worker
 * cannot read each other's environment (`/proc/<pid>/environ` is readable only
 * by the process's own user and root), so no two of them run as one user.
 *
 * A worker with N slots runs its tests as `USER-1` … `USER-N`, each with
 * USER's primary and supplementary groups and home (files a suite shares
 * with USER's group stay readable). runset creates the ones missing at start
 * (`useradd --system`); where it cannot, the operator creates them. USER
 * itself runs no test: it runs a suite version's `npm ci`.
 *
 * Each member takes a free user for as long as its executor runs, and when it
 * gives it back every process of that user is killed: whatever the member
 * left behind, detached or not, ends with it even without cgroups.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { killQuietly } from './process-tree.js';
import { lookUpRunAsUser, RunAsError, type RunAsUser } from './run-as.js';

/** Kill rounds at a member's end: a process forking while it is killed is caught by the next. */
const KILL_ROUNDS = 5;

/** The slot users of a worker with `count` slots, created when missing; RunAsError when one cannot be had. */
export function slotUsers(base: RunAsUser, count: number): RunAsUser[] {
  const users: RunAsUser[] = [];
  for (let slot = 1; slot <= count; slot++) {
    const name = `${base.name}-${slot}`;
    if (!exists(name)) create(name, base);
    const user = lookUpRunAsUser(name);
    if (user.uid === base.uid || users.some((u) => u.uid === user.uid)) throw new RunAsError(`"${name}" has the uid ${user.uid} of another test user; each slot needs a uid of its own`);
    users.push(user);
  }
  return users;
}

function exists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function create(name: string, base: RunAsUser): void {
  const shell = existsSync('/usr/sbin/nologin') ? '/usr/sbin/nologin' : '/bin/false';
  const groups = base.groups.length > 0 ? ['--groups', base.groups.join(',')] : [];
  try {
    execFileSync('useradd', ['--system', '--no-create-home', '--home-dir', base.home, '--shell', shell, '--gid', String(base.gid), ...groups, name], { stdio: 'pipe' });
  } catch (error) {
    const why = (error as { stderr?: Buffer }).stderr?.toString().trim() || (error as Error).message;
    throw new RunAsError(`cannot create the slot user "${name}" (${why}); create it with USER's primary group, e.g. useradd --system --no-create-home --gid ${base.gid} ${name}, one per worker slot`);
  }
}

/** The slot users of one worker: one per running member, every process of it killed when it is given back. */
export class TestUsers {
  private readonly free: RunAsUser[];
  private readonly waiting: Array<(user: RunAsUser) => void> = [];

  constructor(users: readonly RunAsUser[]) {
    this.free = [...users];
  }

  /** A user no running member has (waits for one, which a pool never needs: it runs at most one member per slot). */
  take(): Promise<RunAsUser> {
    const user = this.free.shift();
    return user ? Promise.resolve(user) : new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Kills every process of `user`, then hands it to the next member. */
  give(user: RunAsUser): void {
    killUser(user.uid);
    const next = this.waiting.shift();
    if (next) next(user);
    else this.free.push(user);
  }
}

/** SIGKILLs every process whose real, effective or saved uid is `uid`, in rounds until none is left. */
export function killUser(uid: number): void {
  for (let round = 0; round < KILL_ROUNDS; round++) {
    const pids = processesOf(uid);
    if (pids.length === 0) return;
    for (const pid of pids) killQuietly(pid);
  }
}

function processesOf(uid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
  return entries.map(Number).filter((pid) => {
    try {
      const ids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return ids !== null && ids.slice(1).some((id) => Number(id) === uid) && !zombie(pid);
    } catch {
      return false; // ended while we looked
    }
  });
}

function zombie(pid: number): boolean {
  return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}
