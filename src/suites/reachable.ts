/**
 * Under --run-as, tests (and npm) run as another user, who must reach the
 * suite cache: every folder above it must let that user through. A cache under
 * root's home (0700) would not: say so at start rather than fail every run.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { RunAsUser } from '../executors/run-as.js';

/** Throws, naming the folder, when `user` cannot pass through every folder from `/` to `dir`. */
export async function checkReachable(dir: string, user: RunAsUser): Promise<void> {
  let folder = path.resolve(dir);
  for (;;) {
    const info = await stat(folder);
    const through =
      (info.mode & 0o001) !== 0 ||
      (info.uid === user.uid && (info.mode & 0o100) !== 0) ||
      ((info.gid === user.gid || user.groups.includes(info.gid)) && (info.mode & 0o010) !== 0);
    if (!through) {
      throw new Error(`--run-as's user ${user.name} cannot pass through ${folder} (mode ${(info.mode & 0o777).toString(8)}), so tests could not read the suites cached under it; choose a --suite-cache folder others may reach, e.g. /var/cache/runset/suites`);
    }
    const parent = path.dirname(folder);
    if (parent === folder) return;
    folder = parent;
  }
}
