/**
 * The bytes an embedded store's rows point at, carried inside its backup:
 * suite versions' archives (`<data dir>/suites/`) and artifacts
 * (`<data dir>/artifacts/`). Without them a restored store names versions and
 * artifacts it cannot serve. They go into a table of the backup file itself
 * (one file to keep), in chunks, and come out into the restored data dir's
 * folders, after which the table is dropped from the restored store.
 *
 * Only the bytes the backup's own rows name are copied: the rows are the
 * consistent moment; bytes written after it are orphans the sweeps remove.
 * `secret.key` is never copied: a backup holding the key would open the
 * secrets it seals (docs/guides/operations.md, Backups).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { FileBlobStore } from '../../artifacts/blobs.js';

/** Where each kind of bytes is named, and the data dir folder that holds them. */
const KINDS = [
  { table: 'suite_versions', folder: 'suites', what: 'suite archive' },
  { table: 'artifacts', folder: 'artifacts', what: 'artifact' },
] as const;
type Folder = (typeof KINDS)[number]['folder'];

const TABLE = 'runset_backup_files';
/** Bytes per row: large artifacts (a video, a trace) are never one value in memory. */
const CHUNK_BYTES = 1024 * 1024;

export interface CarriedFiles {
  archives: number;
  artifacts: number;
  /** Named by a row but absent from the data dir when the backup was taken. */
  missing: number;
}

/** Copies into the backup file at `backup` the bytes its rows name, from `dataDir`. */
export async function carryFiles(backup: string, dataDir: string): Promise<CarriedFiles> {
  const db = new Database(backup);
  const carried: CarriedFiles = { archives: 0, artifacts: 0, missing: 0 };
  try {
    db.exec(`CREATE TABLE ${TABLE} (folder TEXT NOT NULL, location TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (folder, location, seq))`);
    const insert = db.prepare(`INSERT INTO ${TABLE} (folder, location, seq, data) VALUES (?, ?, ?, ?)`);
    for (const kind of KINDS) {
      const blobs = new FileBlobStore(path.join(dataDir, kind.folder), Infinity, kind.what);
      for (const location of locationsIn(db, kind.table)) {
        const bytes = await blobs.open(location);
        if (!bytes) {
          carried.missing++;
          continue;
        }
        let seq = 0;
        let pending: Buffer[] = [];
        let size = 0;
        const flush = () => {
          insert.run(kind.folder, location, seq++, Buffer.concat(pending));
          pending = [];
          size = 0;
        };
        for await (const chunk of bytes as AsyncIterable<Buffer>) {
          pending.push(chunk);
          size += chunk.length;
          if (size >= CHUNK_BYTES) flush();
        }
        if (size > 0 || seq === 0) flush();
        carried[kind.folder === 'suites' ? 'archives' : 'artifacts']++;
      }
    }
  } finally {
    db.close();
  }
  return carried;
}

/** Writes the bytes a backup carries into `dataDir`'s folders, then drops them from the restored store at `restored`. */
export async function unpackFiles(backup: string, restored: string, dataDir: string): Promise<CarriedFiles | null> {
  const source = new Database(backup, { readonly: true, fileMustExist: true });
  const scratch = mkdtempSync(path.join(dataDir, '.restore-'));
  try {
    if (!hasTable(source, TABLE)) return null; // a backup from before archives and artifacts were carried
    const carried: CarriedFiles = { archives: 0, artifacts: 0, missing: 0 };
    const files = source.prepare(`SELECT DISTINCT folder, location FROM ${TABLE} ORDER BY folder, location`).all() as Array<{ folder: Folder; location: string }>;
    const chunks = source.prepare(`SELECT data FROM ${TABLE} WHERE folder = ? AND location = ? ORDER BY seq`).pluck();
    for (const { folder, location } of files) {
      const kind = KINDS.find((k) => k.folder === folder);
      if (!kind) continue;
      const temp = path.join(scratch, 'file');
      writeFileSync(temp, '');
      for (const data of chunks.iterate(folder, location) as Iterable<Buffer>) writeFileSync(temp, data, { flag: 'a' });
      // put() checks the name as the blob store would, so a location never writes outside the folder.
      const put = await new FileBlobStore(path.join(dataDir, folder), Infinity, kind.what).put(location.split('/').pop() ?? '', temp);
      if (put.location !== location) throw new Error(`the backup names ${kind.what} bytes at ${location}, which this runset does not store there`);
      carried[folder === 'suites' ? 'archives' : 'artifacts']++;
    }
    const target = new Database(restored);
    try {
      target.exec(`DROP TABLE ${TABLE}`);
      target.exec('VACUUM');
    } finally {
      target.close();
    }
    return carried;
  } finally {
    source.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** How many of each a backup file carries, or null when it carries none (an older backup). */
export function carriedIn(db: Database.Database): CarriedFiles | null {
  if (!hasTable(db, TABLE)) return null;
  const count = (folder: Folder) => (db.prepare(`SELECT count(DISTINCT location) AS n FROM ${TABLE} WHERE folder = ?`).get(folder) as { n: number }).n;
  return { archives: count('suites'), artifacts: count('artifacts'), missing: 0 };
}

function locationsIn(db: Database.Database, table: string): string[] {
  if (!hasTable(db, table)) return [];
  return db.prepare(`SELECT DISTINCT location FROM ${table} WHERE location LIKE 'file:%'`).pluck().all() as string[];
}

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}
