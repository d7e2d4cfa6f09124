/**
 * The one rule for what a suite archive may hold, applied where an archive is
 * made (the CLI packs only what passes), where it arrives (the API refuses an
 * upload that breaks it, storing nothing) and where it is unpacked (a worker
 * unpacks nothing that breaks it): plain files and folders, under the root,
 * within the limits. Never links (a link could reach outside the version),
 * devices, FIFOs, absolute paths or `..`.
 */
import path from 'node:path';
import { MAX_SUITE_FILES, MAX_SUITE_UNPACKED_BYTES } from '../core/suites.js';

/** An archive entry as tar lists it. */
export interface SuiteEntry {
  /** Its path inside the archive, as written there. */
  path: string;
  /** tar's entry type: 'File' and 'Directory' are the only ones kept (node-tar also says 'OldFile', 'ContiguousFile' for plain files). */
  type: string;
  size: number;
}

const PLAIN_FILE = new Set(['File', 'OldFile', 'ContiguousFile']);

/** Why an entry may not be in a suite archive, or null when it may. */
export function entryRefusal(entry: SuiteEntry): string | null {
  const name = JSON.stringify(entry.path);
  if (!PLAIN_FILE.has(entry.type) && entry.type !== 'Directory') {
    return `${name} is a ${entry.type === 'SymbolicLink' || entry.type === 'Link' ? 'link' : entry.type}; a suite holds plain files and folders only (copy what a link points at into the folder instead)`;
  }
  if (entry.path.includes('\0') || entry.path.includes('\\')) return `${name} is not a portable path (no NUL or backslash)`;
  if (path.posix.isAbsolute(entry.path)) return `${name} is an absolute path; paths are relative to the suite's folder`;
  const normal = path.posix.normalize(entry.path);
  if (normal === '..' || normal.startsWith('../') || entry.path.split('/').includes('..')) return `${name} escapes the suite's folder`;
  return null;
}

/** Why an archive with this many entries is refused, or null. */
export function countRefusal(entries: number): string | null {
  return entries > MAX_SUITE_FILES ? `the archive holds more than ${MAX_SUITE_FILES} files and folders` : null;
}

/** Why an archive whose files hold this many bytes in all is refused, or null. */
export function unpackedRefusal(totalBytes: number): string | null {
  return totalBytes > MAX_SUITE_UNPACKED_BYTES ? `its files hold more than ${MAX_SUITE_UNPACKED_BYTES / 1024 ** 2} MiB unpacked; list what the tests do not need in .runsetignore` : null;
}
