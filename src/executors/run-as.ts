/**
 * `--run-as USER`: the OS user every test process runs as, so that a test cannot
 * read the worker's memory, environment or files (/proc/<pid>/environ of a
 * process is readable only by its own user and root).
 *
 * The user is looked up once, at start, through the system's user database
 * (`getent passwd`, so users from LDAP and the like count too) and `id -G` for
 * its groups. A process is started as it with child_process's `uid`/`gid`
 * options; Node then clears the supplementary groups (libuv calls
 * setgroups(0)), so a user that has some is started through util-linux's
 * `setpriv`, which sets them before it execs the program (same pid, no extra
 * process in the tree).
 */
import { execFileSync } from 'node:child_process';
import { accessSync, chownSync, constants, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface RunAsUser {
  name: string;
  uid: number;
  gid: number;
  /** Supplementary groups, the primary one left out. */
  groups: readonly number[];
  home: string;
}

/** How to start one program as a user (or as this process, without one). */
export interface SpawnAs {
  file: string;
  args: string[];
  uid?: number;
  gid?: number;
}

/** Where `setpriv` is looked for when a user has supplementary groups. */
const SETPRIV_PATHS = ['/usr/bin/setpriv', '/bin/setpriv'];

/** Why a user cannot be run as; the caller prefixes the flag's name. */
export class RunAsError extends Error {}

/**
 * Looks up `who` (a user name or a numeric uid) for `--run-as`. Throws RunAsError
 * when it is no user, is root (which would isolate nothing), when this process
 * is not root (only root may start processes as another user), or when the
 * user has supplementary groups and no `setpriv` is installed.
 */
export function lookUpRunAsUser(who: string, myUid: number | undefined = process.getuid?.()): RunAsUser {
  const accepted = 'a user name or uid of an existing non-root user (see /etc/passwd or `getent passwd`)';
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?$/.test(who)) throw new RunAsError(`"${who}" is not a user name; expected ${accepted}`);
  if (myUid !== 0) throw new RunAsError(`runset must run as root to start tests as "${who}" (setuid needs root); it runs as uid ${myUid ?? 'unknown'}. Start it as root, or leave --run-as unset`);
  const entry = passwdEntry(who);
  if (!entry) throw new RunAsError(`no user "${who}" on this machine; expected ${accepted}. Create one, e.g. useradd --system --no-create-home runset-test`);
  const [name = who, , uid = '', gid = '', , home = '/'] = entry.split(':');
  const user: RunAsUser = { name, uid: Number(uid), gid: Number(gid), groups: supplementaryGroups(name, Number(gid)), home: home || '/' };
  if (!Number.isInteger(user.uid) || !Number.isInteger(user.gid)) throw new RunAsError(`the user database's entry for "${who}" is not readable: ${entry}`);
  if (user.uid === 0) throw new RunAsError(`"${who}" is root: tests run as root can read everything the worker holds; expected ${accepted}`);
  if (user.groups.length > 0 && setprivPath() === undefined) {
    throw new RunAsError(`"${who}" has supplementary groups (${user.groups.join(', ')}) and no setpriv (util-linux) is installed to give them to tests; install util-linux, or run as a user without supplementary groups`);
  }
  return user;
}

/** `name:x:uid:gid:gecos:home:shell`, from getent (falling back to /etc/passwd where there is no getent). */
function passwdEntry(who: string): string | undefined {
  try {
    return execFileSync('getent', ['passwd', who], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0] || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined; // getent ran: no such user
  }
  try {
    return readFileSync('/etc/passwd', 'utf8').split('\n').find((line) => {
      const [name, , uid] = line.split(':');
      return name === who || uid === who;
    });
  } catch {
    return undefined;
  }
}

function supplementaryGroups(name: string, primary: number): number[] {
  try {
    const ids = execFileSync('id', ['-G', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split(/\s+/).map(Number);
    return [...new Set(ids.filter((id) => Number.isInteger(id) && id !== primary))];
  } catch {
    return [];
  }
}

export function setprivPath(): string | undefined {
  return SETPRIV_PATHS.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** How to start `file args` as `user` (as this process when there is none). */
export function spawnAs(user: RunAsUser | undefined, file: string, args: readonly string[]): SpawnAs {
  if (!user) return { file, args: [...args] };
  if (user.groups.length === 0) return { file, args: [...args], uid: user.uid, gid: user.gid };
  const ids = [`--reuid=${user.uid}`, `--regid=${user.gid}`, `--groups=${user.groups.join(',')}`];
  return { file: setprivPath() ?? 'setpriv', args: [...ids, '--', file, ...args] };
}

/** What a test process's environment says about who it is: the user's HOME, USER and LOGNAME. */
export function identityVariables(user: RunAsUser | undefined): Record<string, string> {
  return user ? { HOME: user.home, USER: user.name, LOGNAME: user.name } : {};
}

/**
 * Gives a folder the worker made for a test run (and the files directly in it)
 * to the user, so that the test may write there; its mode (0700 from mkdtemp)
 * keeps every other user out. The worker, as root, still reads and removes it.
 */
export function handOver(dir: string, user: RunAsUser | undefined): void {
  if (!user) return;
  chownSync(dir, user.uid, user.gid);
  for (const entry of readdirSync(dir)) chownSync(path.join(dir, entry), user.uid, user.gid);
}
