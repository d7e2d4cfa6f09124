/**
 * The keys sub-store: API keys (only digests are stored: src/auth/keys.ts) and
 * the dashboard's browser sessions, which live and die with their key.
 */
import type { ApiKeyRecord, KeyRole } from '../core/keys.js';
import type { NewSession, SessionRecord } from './browse.js';

export interface NewApiKey {
  id: string;
  name: string;
  /** SHA-256 of the token, hex. The token itself is never stored. */
  hash: string;
  /** Default admin, every environment, no expiry: what keys were before they had scopes. */
  role?: KeyRole;
  envs?: readonly string[] | null;
  expiresAt?: string | null;
}

export interface KeysStore {
  create(key: NewApiKey): Promise<ApiKeyRecord>;
  /**
   * Creates the key only when the store holds no key at all, revoked and expired
   * ones included (`serve`'s first admin key); undefined when it holds one. Of
   * processes calling it at once, one creates it.
   */
  createFirst(key: NewApiKey): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** Returns false when no such key exists. Revoking twice is not an error. */
  revoke(id: string): Promise<boolean>;
  /** The live (non-revoked) key with this hash. */
  findActiveByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  touch(ids: string[]): Promise<void>;

  // ── dashboard sessions ──
  /** Stores a session (and drops expired ones); expiry is judged by the store's clock. */
  createSession(session: NewSession): Promise<SessionRecord>;
  /** A live session whose key is not revoked, or undefined. */
  findSession(idHash: string): Promise<SessionRecord | undefined>;
  deleteSession(idHash: string): Promise<void>;
}
