/**
 * API keys: `rs_` + 32 random bytes in base64url, so secret scanners can find a
 * leaked one. Only the SHA-256 of a token is stored; the token is shown once.
 */
import { hash, randomBytes, randomUUID } from 'node:crypto';
import type { ApiKeyRecord, KeyRole } from '../core/keys.js';
import type { Store } from '../store/store.js';
import { expiryOf, isExpired } from './policy.js';
import { DurationError, parseDuration } from '../core/duration.js';

export const TOKEN_PATTERN = /^rs_[A-Za-z0-9_-]{43}$/;

export function newToken(): string {
  return `rs_${randomBytes(32).toString('base64url')}`;
}

export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** What a new key may do; unset parts default to admin, every environment, no expiry. */
export interface KeyGrant {
  role?: KeyRole;
  envs?: readonly string[] | null;
  expiresAt?: string | null;
}

/** The longest lifetime a key may be given: ten years (longer is "never", which is the default). */
export const MAX_KEY_LIFETIME_MS = 10 * 365 * 86_400_000;

/** The expiry time of a key given a lifetime such as `90d`; throws DurationError naming what is accepted. */
export function expiryAfter(lifetime: string, now: number = Date.now()): string {
  const ms = parseDuration(lifetime, MAX_KEY_LIFETIME_MS);
  if (ms <= 0) throw new DurationError(lifetime, 'a key must live longer than 0');
  return new Date(now + ms).toISOString();
}

export async function createKey(store: Store, name: string, grant: KeyGrant = {}): Promise<{ token: string; key: ApiKeyRecord }> {
  const token = newToken();
  const key = await store.keys.create({ id: randomUUID(), name, hash: hashToken(token), ...grant });
  return { token, key };
}

/**
 * `serve` on a store that has never had a key makes this admin key and prints
 * it once, so a first start needs no other command. A store whose keys were all
 * revoked gets none: someone locked it on purpose (a leak), and a restart must
 * not undo that; `runset keys create` on the store is the way back in.
 */
export async function createFirstKey(store: Store): Promise<{ token: string; key: ApiKeyRecord } | undefined> {
  const token = newToken();
  const key = await store.keys.createFirst({ id: randomUUID(), name: 'first admin', hash: hashToken(token) });
  return key && { token, key };
}

/** Makes sure a given token (RUNSET_BOOTSTRAP_KEY) is a live key; creates it when missing. */
export async function ensureKey(store: Store, token: string, name: string): Promise<ApiKeyRecord> {
  if (!TOKEN_PATTERN.test(token)) {
    throw new Error('RUNSET_BOOTSTRAP_KEY must look like rs_ followed by 43 base64url characters (make one with `runset keys create`)');
  }
  const hash = hashToken(token);
  const existing = await store.keys.findActiveByHash(hash);
  if (existing) return existing;
  try {
    return await store.keys.create({ id: randomUUID(), name, hash });
  } catch (err) {
    // Several processes starting together with one bootstrap key: another made it first.
    const made = await store.keys.findActiveByHash(hash);
    if (made) return made;
    // Else the hash is taken by a key that is no longer active.
    throw new Error('RUNSET_BOOTSTRAP_KEY names a key that was revoked: make a new one with `runset keys create` and set that', { cause: err });
  }
}

export const CACHE_MISS = Symbol('cache miss');

/**
 * `Bearer rs_…`: the scheme in any case (RFC 9110 §11.1: schemes are
 * case-insensitive; some clients send `bearer`), spaces or tabs around it.
 */
const BEARER = /^[ \t]*bearer[ \t]+(\S+)[ \t]*$/i;

/** The token of a well-formed `Bearer rs_…` header, else undefined. */
export function tokenOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  // The spelling every client of ours sends, without the match array of BEARER (the status GET's path).
  if (header.startsWith('Bearer ')) {
    const token = header.slice(7);
    if (TOKEN_PATTERN.test(token)) return token;
  }
  const token = BEARER.exec(header)?.[1];
  return token && TOKEN_PATTERN.test(token) ? token : undefined;
}

/** An Authorization value for a key typed by a person: `rs_…`, or `Bearer rs_…` pasted whole, spaces around either. */
export function asBearer(typed: string): string {
  const trimmed = typed.trim();
  return /^bearer[ \t]/i.test(trimmed) ? trimmed : `Bearer ${trimmed}`;
}

// Tokens are only ever handled as SHA-256 digests (hashToken): the cache and
// the store are keyed by the digest, so a token is found only by the digest of
// the very same token, and no comparison ever runs on the token itself (one
// whose time could tell how much of a guess was right). The digest is hex
// straight from the one-shot `hash`: no Hash object, no Buffer, no conversion
// per request on the status GET's path (a Buffer digest then turned into hex,
// as before, took about twice as long).
interface CacheEntry {
  key: ApiKeyRecord | undefined;
  /** When this lookup is to be made again (the cache's TTL). */
  expires: number;
  /** When the key itself expires (its `expiresAt`, read once per lookup, not per request); Infinity for none. */
  keyExpires: number;
}

/**
 * Checks bearer tokens. Lookups are cached for `ttlMs` (default 500 ms) so the
 * status GET does not touch the key table on every request, while a key created
 * or revoked by another process takes effect within a second. Use is recorded
 * in batches (`last_used_at`), off the request path.
 */
export class KeyAuthenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly used = new Set<string>();
  private readonly flushTimer: NodeJS.Timeout;

  constructor(
    private readonly store: Store,
    private readonly ttlMs = 500,
    flushMs = 5000,
  ) {
    this.flushTimer = setInterval(() => void this.flush(), flushMs);
    this.flushTimer.unref();
  }

  /** The key for an `Authorization` header value, or undefined for missing, malformed, unknown, revoked and expired alike. */
  async authenticate(header: string | undefined): Promise<ApiKeyRecord | undefined> {
    const token = tokenOf(header);
    if (!token) return undefined;
    const digest = hashToken(token);
    const known = this.cached(digest);
    if (known !== CACHE_MISS) return known;
    const key = await this.store.keys.findActiveByHash(digest);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(digest, { key, expires: Date.now() + this.ttlMs, keyExpires: key ? expiryOf(key) : Infinity });
    if (!key || isExpired(key)) return undefined;
    this.used.add(key.id);
    return key;
  }

  /**
   * As authenticate, but read from the store whatever the cache holds (and the
   * cache refreshed with it): for a request held open, before it answers
   * something that only a live key may have (a waiting claim, a notices stream).
   */
  async recheck(header: string | undefined): Promise<ApiKeyRecord | undefined> {
    const token = tokenOf(header);
    if (token) this.cache.delete(hashToken(token));
    return this.authenticate(header);
  }

  /**
   * The answer when the cache (or the header's shape) decides it without the
   * store — the status GET's usual case, answered with no await at all.
   */
  fromCache(header: string | undefined): ApiKeyRecord | undefined | typeof CACHE_MISS {
    const token = tokenOf(header);
    return token ? this.cached(hashToken(token)) : undefined;
  }

  private cached(digest: string): ApiKeyRecord | undefined | typeof CACHE_MISS {
    const entry = this.cache.get(digest);
    const now = Date.now();
    if (!entry || entry.expires <= now) return CACHE_MISS;
    if (!entry.key || entry.keyExpires <= now) return undefined;
    this.used.add(entry.key.id);
    return entry.key;
  }

  async flush(): Promise<void> {
    if (this.used.size === 0) return;
    const ids = [...this.used];
    this.used.clear();
    try {
      await this.store.keys.touch(ids);
    } catch {
      // last_used_at is informative; a failed write is retried with the next batch.
      ids.forEach((id) => this.used.add(id));
    }
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    await this.flush();
  }
}
