/**
 * One `runset serve` per SQLite file. The embedded store keeps wake-ups in
 * process and trusts that no other process holds leases in its file; this lock
 * makes that true, and so lets a restarted server recover at once every member
 * a crashed one left RUNNING instead of waiting for their leases to expire.
 */
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';

export class DataDirLockedError extends Error {}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireLock(file: string): () => void {
  for (let tries = 0; tries < 2; tries++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => {
        try {
          if (readFileSync(file, 'utf8') === String(process.pid)) unlinkSync(file);
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(file, 'utf8'));
      if (Number.isInteger(holder) && holder !== process.pid && alive(holder)) {
        throw new DataDirLockedError(
          `another runset process (pid ${holder}) serves the SQLite store ${file.replace(/\.lock$/, '')}; stop it, or use another --data-dir (several servers need PostgreSQL: --database-url)`,
        );
      }
      unlinkSync(file); // left by a process that died: take it over
    }
  }
  throw new DataDirLockedError(`could not take the lock ${file}`);
}
