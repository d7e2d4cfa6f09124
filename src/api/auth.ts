import type { FastifyReply, FastifyRequest } from 'fastify';
import { problemOf } from '../core/errors.js';
import type { ApiKeyRecord } from '../core/keys.js';
import { CACHE_MISS, type KeyAuthenticator } from '../auth/keys.js';
import { sendProblem } from './problems.js';
import { csrfMatches, readCookie, SESSION_COOKIE, type ActiveSession, type SessionAuthenticator } from '../auth/sessions.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The key this request authenticated with (null until it has). */
    apiKey: ApiKeyRecord | null;
  }
}

const UNAUTHORIZED = 'send Authorization: Bearer <API key> with a live key (create one with `runset keys create --name NAME`)';

/** Decides, once the key is known, whether it may call the route; answers the refusal itself (src/api/permission.ts). */
export type Authorize = (request: FastifyRequest, reply: FastifyReply) => boolean;

const ANY_KEY: Authorize = () => true;

/**
 * onRequest hook: the same 401 for a missing, malformed, unknown, revoked or
 * expired key, then `authorize` in the same hook (one step fewer on the status
 * GET's path than a hook of its own). A key found in the authenticator's cache
 * is accepted synchronously: no promise on that hot path; a miss asks the store.
 */
export function requireKey(auth: KeyAuthenticator, authorize: Authorize = ANY_KEY) {
  // Made once per hook: a key found in the cache costs no closure per request.
  const accept = (key: ApiKeyRecord | undefined, request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    if (!key) {
      void sendProblem(reply, problemOf('unauthorized', UNAUTHORIZED));
      return; // replied: the request goes no further
    }
    request.apiKey = key;
    if (authorize(request, reply)) done();
  };
  return (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    const header = request.headers.authorization;
    const cached = auth.fromCache(header);
    if (cached !== CACHE_MISS) return accept(cached, request, reply, done);
    auth.authenticate(header).then((key) => accept(key, request, reply, done), done);
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request was authenticated by the dashboard's session cookie. */
    dashboardSession: ActiveSession | null;
  }
}

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * onRequest hook of the API: a Bearer key (exactly as requireKey: a request with
 * an Authorization header never looks at cookies), else the dashboard's session
 * cookie. A cookie-authenticated request that changes something must come from
 * this origin and carry the session's CSRF token (synchronizer token).
 */
export function requireKeyOrSession(auth: KeyAuthenticator, sessions: SessionAuthenticator, authorize: Authorize = ANY_KEY) {
  const bearer = requireKey(auth, authorize);
  const bySession = async (request: FastifyRequest, reply: FastifyReply): Promise<boolean> => {
    const session = await sessions.authenticate(readCookie(request.headers.cookie, SESSION_COOKIE));
    if (!session) {
      await sendProblem(reply, problemOf('unauthorized', 'the dashboard session is missing, expired or its key was revoked: sign in again, or send Authorization: Bearer <API key>'));
      return false;
    }
    if (!SAFE_METHODS.has(request.method)) {
      const refusal = crossSiteRefusal(request, session);
      if (refusal) {
        await sendProblem(reply, problemOf('csrf_rejected', refusal));
        return false;
      }
    }
    request.apiKey = session.key;
    request.dashboardSession = session;
    return authorize(request, reply);
  };
  return (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    if (request.headers.authorization !== undefined || request.headers.cookie === undefined) return bearer(request, reply, done);
    bySession(request, reply).then((ok) => ok && done(), done);
  };
}

/** Why a cookie-authenticated write is refused, or undefined when it may proceed. */
export function crossSiteRefusal(request: FastifyRequest, session: ActiveSession): string | undefined {
  if (!isSameOrigin(request)) return 'the request came from another origin';
  if (!csrfMatches(session.csrfToken, request.headers['x-csrf-token'])) return 'send the X-CSRF-Token header the dashboard received at sign-in';
  return undefined;
}

/**
 * Browsers send Origin on every cross-origin request and on same-origin writes;
 * without it (an older browser) Sec-Fetch-Site must not say cross-site. Behind
 * a proxy that rewrites Host, X-Forwarded-Host is accepted too.
 */
export function isSameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) {
    const site = request.headers['sec-fetch-site'];
    return site === undefined || site === 'same-origin' || site === 'none';
  }
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false; // "null" (sandboxed frames, file:) and garbage
  }
  const forwarded = request.headers['x-forwarded-host'];
  const proxied = typeof forwarded === 'string' ? forwarded.split(',')[0]?.trim() : undefined;
  return host === request.headers.host || (proxied !== undefined && host === proxied);
}
