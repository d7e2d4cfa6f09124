/** CPU time of a process, from /proc: what the benches weigh a server's work by, beside the wall clock. */
import { readFileSync } from 'node:fs';

/** CPU time (user + sys) a process has used so far, ms; 0 where there is no /proc. */
export function cpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return 0;
  }
}
