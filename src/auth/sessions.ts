/**
 * Browser sessions for the dashboard: an API key is exchanged once for a random
 * session id held in an HttpOnly cookie. The store keeps only the id's SHA-256,
 * the key it stands for, a CSRF token and an expiry, so every API process on a
 * shared store accepts the session, and revoking the key ends it.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKeyRecord } from '../core/keys.js';
import type { SessionRecord } from '../store/browse.js';
import type { Store } from '../store/store.js';
import { hashToken } from './keys.js';
import { isExpired } from './policy.js';

export const SESSION_COOKIE = 'runset_session';
/** Absolute lifetime: a forgotten tab does not keep access for ever. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export interface ActiveSession extends SessionRecord {
  idHash: string;
}

interface CacheEntry {
  session: ActiveSession | undefined;
  expires: number;
}

/**
 * Session lookups are cached for `ttlMs` (like keys), so a page polling every
 * second costs one store read per half second at most, while a revoked key or
 * a sign-out on another process takes effect within a second.
 */
export class SessionAuthenticator {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly store: Store,
    private readonly ttlMs = 500,
  ) {}

  async signIn(key: ApiKeyRecord): Promise<{ sessionId: string; session: ActiveSession }> {
    const sessionId = randomBytes(32).toString('base64url');
    const idHash = hashSessionId(sessionId);
    const record = await this.store.keys.createSession({
      idHash,
      keyId: key.id,
      csrfToken: randomBytes(32).toString('base64url'),
      ttlMs: SESSION_TTL_MS,
    });
    return { sessionId, session: { ...record, idHash } };
  }

  /** The live session for a cookie value, or undefined for missing, malformed, unknown, expired and revoked alike. */
  async authenticate(sessionId: string | undefined): Promise<ActiveSession | undefined> {
    if (!sessionId || !SESSION_ID.test(sessionId)) return undefined;
    const idHash = hashSessionId(sessionId);
    const now = Date.now();
    let entry = this.cache.get(idHash);
    if (!entry || entry.expires <= now) {
      const record = await this.store.keys.findSession(idHash);
      entry = { session: record ? { ...record, idHash } : undefined, expires: now + this.ttlMs };
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(idHash, entry);
    }
    const session = entry.session;
    // The key's own expiry ends its sessions as revoking it does.
    if (session && (Date.parse(session.expiresAt) <= now || isExpired(session.key, now))) return undefined;
    return session;
  }

  async signOut(session: ActiveSession): Promise<void> {
    this.cache.delete(session.idHash);
    await this.store.keys.deleteSession(session.idHash);
  }
}

/** Session ids are kept only as SHA-256 digests, as API keys are. */
export function hashSessionId(sessionId: string): string {
  return hashToken(sessionId);
}

/** Constant-time comparison of the CSRF token the page sent with the session's. */
export function csrfMatches(expected: string, given: string | string[] | undefined): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The value of one cookie from a Cookie header (first occurrence wins, as browsers send the most specific first). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The Set-Cookie value. HttpOnly keeps it from page scripts, SameSite=Strict
 * keeps other sites' requests from carrying it, Secure when served over HTTPS.
 * An empty value with Max-Age=0 signs out.
 */
export function sessionCookie(value: string, opts: { secure: boolean; maxAgeSeconds: number }): string {
  const parts = [`${SESSION_COOKIE}=${value}`, 'Path=/', `Max-Age=${opts.maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict'];
  if (opts.secure) parts.push('Secure');
  return parts.join('; ');
}
