/**
 * Shapes of the dashboard's store operations: listing sets newest first with an
 * opaque cursor, and browser sessions. The cursor codec lives here so both
 * backends page identically (the contract suite checks they do).
 */
import { RunsetError } from '../core/errors.js';
import type { RunState } from '../core/states.js';
import type { TestRunSetRecord } from '../core/types.js';
import type { ApiKeyRecord } from '../core/keys.js';

export interface ListSetsQuery {
  env?: string;
  /** Only sets of these environments (a key's scope); undefined: every one. */
  envs?: readonly string[];
  status?: RunState;
  /** Only sets carrying every one of these labels. */
  labels?: Readonly<Record<string, string>>;
  /** 1…100; the caller validates. */
  limit: number;
  /** From a previous page's `nextCursor`. */
  cursor?: string;
}

export interface SetPage {
  /** Newest first: by createdAt, then id, both descending. */
  sets: TestRunSetRecord[];
  /** Null on the last page. */
  nextCursor: string | null;
}

export interface NewSession {
  /** SHA-256 (hex) of the session id held in the cookie: a leaked table holds no usable session. */
  idHash: string;
  keyId: string;
  csrfToken: string;
  ttlMs: number;
}

export interface SessionRecord {
  key: ApiKeyRecord;
  csrfToken: string;
  expiresAt: string;
}

/** Where a page ended: the last set's (createdAt, id). */
export interface CursorPosition {
  createdAt: string;
  id: string;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url');
}

/**
 * Cursors are opaque to clients but not trusted: anything that is not one we
 * made is a 400 (invalid_query), never a database error.
 */
export function decodeCursor(cursor: string): CursorPosition {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (Array.isArray(value) && value.length === 2) {
    const [createdAt, id] = value as unknown[];
    // Set ids are UUIDs: anything else (a NUL byte, which PostgreSQL's text cannot hold) was never ours.
    if (typeof createdAt === 'string' && ISO.test(createdAt) && typeof id === 'string' && UUID.test(id)) return { createdAt, id };
  }
  throw new RunsetError('invalid_query', 'querystring.cursor is not a cursor this server gave out; use the nextCursor of a previous page');
}
