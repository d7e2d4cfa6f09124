/**
 * The one rule for what a suite archive may hold, applied where an archive is
 * made (the CLI packs only what passes), where it arrives (the API refuses an
 * upload that breaks it, storing nothing) and where it is unpacked (a worker
 * unpacks nothing that breaks it): plain files and folders, under the root,
 * within the limits. Never links (a link could reach outside the version),
 * devices, FIFOs, absolute paths or `..`.
 */
import path from 'node:path';
import { MAX_SUITE_FILES, MAX_SUITE_UNPACKED_BYTES, SUITE_READ_LIMITS } from '../core/suites.js';

/** An archive entry as tar lists it. */
export interface SuiteEntry {
  /** Its path inside the archive, as written there. */
  path: string;
  /** tar's entry type: 'File' and 'Directory' are the only ones kept (node-tar also says 'OldFile', 'ContiguousFile' for plain files). */
  type: string;
  size: number;
}

/** 400: the bytes are not the ones named; 413: past the size limit; 422: the archive or its content is refused. */
export type SuiteRefusalCode = 'hash_mismatch' | 'too_large' | 'bad_archive';

/** An upload refused: `code` for the route's status, the message for the answer's detail. */
export class SuiteRefusal extends Error {
  readonly code: SuiteRefusalCode;
  constructor(code: SuiteRefusalCode, message: string) {
    super(message);
    this.name = 'SuiteRefusal';
    this.code = code;
  }
}

const PLAIN_FILE = new Set(['File', 'OldFile', 'ContiguousFile']);
/** What a refusal calls an entry of another type (node-tar's names, in words). */
const TYPE_WORDS: Record<string, string> = { SymbolicLink: 'link', Link: 'link', CharacterDevice: 'character device', BlockDevice: 'block device', FIFO: 'FIFO' };

/** Why an entry may not be in a suite archive, or null when it may. */
export function entryRefusal(entry: SuiteEntry): string | null {
  const name = shownPath(entry.path);
  if (!PLAIN_FILE.has(entry.type) && entry.type !== 'Directory') {
    const isLink = entry.type === 'SymbolicLink' || entry.type === 'Link';
    const instead = isLink ? ' (copy what the link points at into the folder instead)' : '';
    return `${name} is a ${TYPE_WORDS[entry.type] ?? entry.type}; a suite holds plain files and folders only${instead}`;
  }
  const bytes = Buffer.byteLength(entry.path);
  if (bytes > SUITE_READ_LIMITS.pathBytes) return `${name} is a path of ${bytes} bytes; a path is at most ${SUITE_READ_LIMITS.pathBytes} bytes`;
  if (entry.path.includes('\0') || entry.path.includes('\\')) return `${name} is not a portable path (no NUL or backslash)`;
  if (path.posix.isAbsolute(entry.path)) return `${name} is an absolute path; paths are relative to the suite's folder`;
  const normal = path.posix.normalize(entry.path);
  if (normal === '..' || normal.startsWith('../') || entry.path.split('/').includes('..')) return `${name} escapes the suite's folder`;
  return null;
}

/** A path as a refusal shows it: quoted, and cut short when long (a refused path may be megabytes). */
export function shownPath(entryPath: string): string {
  return entryPath.length > 100 ? `${JSON.stringify(entryPath.slice(0, 60))}… (cut short)` : JSON.stringify(entryPath);
}

/** Why an archive whose paths hold this many bytes in all is refused, or null. */
export function nameBytesRefusal(totalBytes: number): string | null {
  return totalBytes > SUITE_READ_LIMITS.nameBytes ? `its paths hold more than ${SUITE_READ_LIMITS.nameBytes} bytes in all, the limit of the bytes of all names` : null;
}

/** Why an archive with this many entries is refused, or null. */
export function countRefusal(entries: number): string | null {
  return entries > MAX_SUITE_FILES ? `the archive holds more than ${MAX_SUITE_FILES} files and folders` : null;
}

/** Why an archive whose files hold this many bytes in all is refused, or null. */
export function unpackedRefusal(totalBytes: number): string | null {
  return totalBytes > MAX_SUITE_UNPACKED_BYTES ? `its files hold more than ${MAX_SUITE_UNPACKED_BYTES / 1024 ** 2} MiB unpacked; list what the tests do not need in .runsetignore` : null;
}
