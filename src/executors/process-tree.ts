/**
 * Killing a whole process tree. A process group is not enough for Playwright:
 * it starts each browser detached (a group of its own), so killing the runner's
 * group would leave browsers behind. The tree is read from /proc before anything
 * is killed — once a parent dies its children are re-parented and the link is
 * lost — then every process in it, and every group they lead, gets SIGKILL.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** pid → parent pid, from /proc (empty where there is no /proc). */
function parentsByPid(): Map<number, number> {
  const parents = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return parents;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …" — comm may hold spaces and parentheses: parse after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
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

/** A process's start time (clock ticks since boot): with its pid, it names one process even after pid reuse. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * The descendants of `root` seen so far, remembered across calls, so that those
 * still alive once `root` died without stopping them (SIGKILL, out of memory) —
 * re-parented, unreachable from it any more — can be found and stopped.
 */
export class DescendantWatch {
  private readonly seen = new Map<number, string>();

  constructor(private readonly root: number) {}

  /** Notes the current descendants. */
  look(): void {
    for (const pid of processTree(this.root).slice(1)) {
      if (this.seen.has(pid)) continue;
      const started = startTime(pid);
      if (started !== undefined) this.seen.set(pid, started);
    }
  }

  /** SIGKILLs every noted descendant that is still the same process, and the group it leads. */
  killSurvivors(): void {
    for (const [pid, started] of this.seen) {
      if (startTime(pid) !== started) continue; // gone, or the pid is someone else's now
      killQuietly(-pid);
      killQuietly(pid);
    }
    this.seen.clear();
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
