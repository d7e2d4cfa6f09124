/**
 * The data dir and the store's files are runset's alone, with or without
 * --run-as: the folder 0700 (an existing looser one is tightened), the SQLite
 * file and its -wal and -shm 0600. SQLite gives the -wal and -shm files it
 * makes later the mode of the database file, so the file is made 0600 before
 * SQLite first opens it.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import path from 'node:path';

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** Makes (or tightens) the folder of `file` and `file` itself, and any -wal/-shm beside it. */
export function makeStoreFilesPrivate(file: string): void {
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  tighten(dir, DIR_MODE);
  closeSync(openSync(file, 'a', FILE_MODE));
  for (const one of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(one)) tighten(one, FILE_MODE);
}

/** Takes away every permission beyond `mode` (group and others), keeping what the owner had. */
function tighten(target: string, mode: number): void {
  const current = statSync(target).mode & 0o777;
  if ((current & ~mode) !== 0) chmodSync(target, current & mode);
}
