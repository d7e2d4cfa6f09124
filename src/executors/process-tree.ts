/**
 * Killing a whole process tree. A process group is not enough for Playwright:
 * it starts each browser detached (a group of its own), so killing the runner's
 * group would leave browsers behind. The tree is read from /proc before anything
 * is killed — once a parent dies its children are re-parented and the link is
 * lost — then every process in it, and every group they lead, gets SIGKILL.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Every process id in /proc (none where there is no /proc). */
function livePids(): number[] {
  try {
    return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).map(Number);
  } catch {
    return [];
  }
}

/** pid → parent pid, from /proc (empty where there is no /proc). */
function parentsByPid(): Map<number, number> {
  const parents = new Map<number, number>();
  for (const entry of livePids()) {
    try {
      // "pid (comm) state ppid …" — comm may hold spaces and parentheses: parse after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(entry, ppid);
    } catch {
      // the process ended while we looked
    }
  }
  return parents;
}

/** `root` and all its descendants, root first. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parentsByPid()) {
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i] as number) ?? []));
  return tree;
}

/**
 * Processes whose environment holds `name=value`. A marker put in a process's
 * environment is inherited by everything it starts (and they by theirs), so it
 * finds descendants even once they were re-parented — after their parent was
 * killed outright — where the parent links of /proc no longer lead.
 */
export function processesMarked(name: string, value: string): number[] {
  const entry = `${name}=${value}`;
  const found: number[] = [];
  for (const pid of livePids()) {
    if (pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(entry)) found.push(pid);
    } catch {
      // ended while we looked, or not ours to read
    }
  }
  return found;
}

/** SIGKILLs every process marked `name=value` (see processesMarked) and the group each leads. */
export function killMarked(name: string, value: string): void {
  for (const pid of processesMarked(name, value)) {
    killQuietly(-pid);
    killQuietly(pid);
  }
}

/** SIGKILLs `root`, its descendants and their process groups; any of them may already be gone. */
export function killTree(root: number): void {
  const pids = processTree(root);
  for (const pid of pids) {
    killQuietly(-pid); // the group it may lead (a detached browser, the runner's own group)
    killQuietly(pid);
  }
}

/** SIGKILL to a process (or, negative, a process group) that may already be gone. */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ESRCH' && code !== 'EPERM') throw error;
  }
}
