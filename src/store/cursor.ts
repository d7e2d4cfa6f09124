/**
 * The store's one cursor codec: where a page ended, as base64url JSON of a few
 * strings, so both backends page identically (the contract suite checks they
 * do). Cursors are opaque to clients but not trusted: anything that is not one
 * we made is a 400 (invalid_query), never a database error.
 */
import { RunsetError } from '../core/errors.js';
import { isUuid } from '../core/uuid.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function notOurs(): RunsetError {
  return new RunsetError('invalid_query', 'querystring.cursor is not a cursor this server gave out; use the nextCursor of a previous page');
}

function encode(parts: readonly string[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

function decode(cursor: string): unknown {
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/** A page ordered by a timestamp, then an id (sets by creation, runs by end): its last row's pair. */
export function encodeStampCursor(stamp: string, id: string): string {
  return encode([stamp, id]);
}

/** Ids are UUIDs: anything else (a NUL byte, which PostgreSQL's text cannot hold) was never ours. */
export function decodeStampCursor(cursor: string): [stamp: string, id: string] {
  const value = decode(cursor);
  if (Array.isArray(value) && value.length === 2) {
    const [stamp, id] = value as unknown[];
    if (typeof stamp === 'string' && ISO.test(stamp) && typeof id === 'string' && isUuid(id)) return [stamp, id];
  }
  throw notOurs();
}

/** A page ordered by name: its last name. */
export function encodeNameCursor(name: string): string {
  return encode([name]);
}

/** A NUL byte was never ours (PostgreSQL's text cannot hold one). */
export function decodeNameCursor(cursor: string): string {
  const value = decode(cursor);
  if (Array.isArray(value) && value.length === 1 && typeof value[0] === 'string' && !value[0].includes('\0')) return value[0];
  throw notOurs();
}
