/**
 * Backups of the embedded store: SQLite's online backup API (through
 * better-sqlite3) copies the database page by page while `serve` keeps
 * writing, and the copy is one consistent moment of it. Restore copies a
 * backup into a data dir that no `serve` owns (its lock is taken for the
 * while), never over a store unless asked, and keeps what it replaces.
 * The suite archives and artifacts the rows name travel inside the backup
 * (./backup-files.ts); the secret key does not.
 */
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { acquireLock } from './lock.js';
import { carriedIn, carryFiles, unpackFiles, type CarriedFiles } from './backup-files.js';

export class BackupError extends Error {}

export interface StoreSummary {
  file: string;
  bytes: number;
  /** The highest migration applied: a newer runset upgrades it when it opens the store. */
  schemaVersion: number;
  sets: number;
  keys: number;
  /** The suite archives and artifacts the file carries; null for a backup from before they were carried. */
  carried: CarriedFiles | null;
}

export const STORE_FILE = 'runset.db';

/** Copies the store at `source` to `dest` (a new file), consistent even while a server writes to it. */
export async function backupStore(source: string, dest: string): Promise<StoreSummary> {
  if (!existsSync(source)) throw new BackupError(`there is no runset store at ${source}; pass the server's --data-dir (or RUNSET_DATA_DIR)`);
  if (existsSync(dest)) throw new BackupError(`${dest} already exists; a backup never overwrites a file: choose a new name`);
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    summarize(db, source); // refuses a file that is not a runset store before copying anything
    await db.backup(dest);
  } finally {
    db.close();
  }
  let carried: CarriedFiles;
  try {
    carried = await carryFiles(dest, path.dirname(source));
  } catch (err) {
    rmSync(dest, { force: true }); // never a backup that looks whole but lacks bytes
    throw err;
  }
  return { ...describeStore(dest), carried };
}

/** What a store file holds; refuses a file that is not a runset store. */
export function describeStore(file: string): StoreSummary {
  if (!existsSync(file)) throw new BackupError(`there is no file ${file}`);
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new BackupError(`${file} cannot be opened as a SQLite database (${(err as Error).message})`);
  }
  try {
    return { ...summarize(db, file), file, bytes: statSync(file).size };
  } finally {
    db.close();
  }
}

function summarize(db: Database.Database, file: string): Omit<StoreSummary, 'file' | 'bytes'> {
  let tables: string[];
  try {
    tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((t) => t.name);
  } catch (err) {
    throw new BackupError(`${file} is not a SQLite database (${(err as Error).message})`);
  }
  for (const needed of ['schema_migrations', 'test_run_sets', 'api_keys']) {
    if (!tables.includes(needed)) throw new BackupError(`${file} is not a runset store: it has no ${needed} table`);
  }
  const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
  return {
    carried: carriedIn(db),
    schemaVersion: count('SELECT COALESCE(max(version), 0) AS n FROM schema_migrations'),
    sets: count('SELECT count(*) AS n FROM test_run_sets'),
    keys: count('SELECT count(*) AS n FROM api_keys'),
  };
}

export interface Restored {
  summary: StoreSummary;
  /** Where the store that was in the data dir went (with --force), or null when there was none. */
  keptAside: string | null;
}

/** Restores `backup` as the store of `dataDir`, which no server may be serving. */
export async function restoreStore(backup: string, dataDir: string, opts: { force: boolean; now?: Date }): Promise<Restored> {
  describeStore(backup); // a runset store, or refused before the data dir is touched
  mkdirSync(dataDir, { recursive: true });
  const target = path.join(dataDir, STORE_FILE);
  const release = acquireLock(`${target}.lock`); // DataDirLockedError while a serve owns it
  try {
    let keptAside: string | null = null;
    if (existsSync(target)) {
      if (!opts.force) {
        throw new BackupError(`${dataDir} already holds a store (${STORE_FILE}); pass --force to replace it (the current one is kept beside it)`);
      }
      keptAside = `${target}.before-restore-${(opts.now ?? new Date()).toISOString().replace(/[:.]/g, '-')}`;
      // With its write-ahead log and index, should the server that wrote it have died without a checkpoint.
      for (const suffix of ['', '-wal', '-shm']) if (existsSync(target + suffix)) renameSync(target + suffix, keptAside + suffix);
    }
    const source = new Database(backup, { readonly: true, fileMustExist: true });
    try {
      await source.backup(target);
    } finally {
      source.close();
    }
    const carried = await unpackFiles(backup, target, dataDir);
    return { summary: { ...describeStore(target), carried }, keptAside };
  } finally {
    release();
  }
}
