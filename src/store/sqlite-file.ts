/**
 * The embedded store as a file, for the CLI's commands that handle the file
 * itself (`serve` refusing a data dir another process serves, `prune`,
 * `backup`, `restore`): its name in the data dir, the lock one process holds
 * on it, backup and restore. Modules outside src/store/ reach the backends only
 * through src/store/ (lint: no-reaching-into-a-backend), so these are offered here.
 */
import path from 'node:path';
import { acquireLock } from './sqlite/lock.js';
import { STORE_FILE } from './sqlite/backup.js';

export { DataDirLockedError } from './sqlite/lock.js';
export { backupStore, restoreStore, STORE_FILE, type StoreSummary } from './sqlite/backup.js';

/** Takes the lock a serving process holds on the data dir's store (DataDirLockedError while one does); returns its release. */
export function lockDataDir(dataDir: string): () => void {
  return acquireLock(`${path.join(dataDir, STORE_FILE)}.lock`);
}
