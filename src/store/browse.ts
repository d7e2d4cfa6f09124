/**
 * Shapes of the dashboard's store operations: listing sets newest first with an
 * opaque cursor (./cursor.ts), and browser sessions.
 */
import { decodeStampCursor, encodeStampCursor } from './cursor.js';
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

export function encodeCursor(position: CursorPosition): string {
  return encodeStampCursor(position.createdAt, position.id);
}

export function decodeCursor(cursor: string): CursorPosition {
  const [createdAt, id] = decodeStampCursor(cursor);
  return { createdAt, id };
}
