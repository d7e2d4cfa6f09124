/**
 * Dashboard sign-in and sign-out: POST /api/v0/session exchanges an API key for
 * a session cookie; GET tells the page who it is and its CSRF token; DELETE
 * signs out. These routes sit outside the key check: they are how a browser
 * gets (and drops) its credential.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { RunsetError } from '../../core/errors.js';
import { SessionInfo, SignInBody } from '../../core/wire-dashboard.js';
import { asBearer, type KeyAuthenticator } from '../../auth/keys.js';
import { readCookie, SESSION_COOKIE, SESSION_TTL_MS, sessionCookie, type ActiveSession, type SessionAuthenticator } from '../../auth/sessions.js';
import { crossSiteRefusal, isSameOrigin } from '../auth.js';
import { BODY_PROBLEMS, named, problems, PUBLIC } from './common.js';
import type { SignInLimit } from '../rate-limit.js';
import { allowedOperations, describeRights } from '../../auth/policy.js';


export interface SessionRouteOptions {
  auth: KeyAuthenticator;
  sessions: SessionAuthenticator;
  signInLimit: SignInLimit;
}

export const sessionRoutes: FastifyPluginAsync<SessionRouteOptions> = (app, { auth, sessions, signInLimit }) => {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post(
    '/session',
    {
      attachValidation: true,
      schema: {
        summary: 'Sign in to the dashboard: exchange an API key for a session cookie',
        description: 'Public: the key in the body is the credential. Sets the HttpOnly session cookie; must come from the dashboard\'s own origin.',
        tags: ['Dashboard session'],
        operationId: 'createSession',
        security: PUBLIC,
        body: named(SignInBody),
        response: { 200: named(SessionInfo, 'Signed in: the session cookie is set; send csrfToken as X-CSRF-Token on writes'), ...problems(...BODY_PROBLEMS, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      // Every attempt counts, before the key is looked at: a client trying keys is slowed whatever it sends.
      signInLimit.take(request.ip, reply);
      // The shared validation messages describe the create body; this one says what sign-in wants.
      if (request.validationError) throw new RunsetError('invalid_body', 'expected a JSON object {"key": "rs_…"}');
      // Login CSRF: another site must not sign a browser in under its own key.
      if (!isSameOrigin(request)) throw new RunsetError('csrf_rejected', 'sign-in must come from the dashboard itself');
      const key = await auth.authenticate(asBearer(request.body.key));
      if (!key) {
        // Who tried, never what: the key sent (even a wrong one, often a real key's typo) stays out of the log.
        request.log.warn({ address: request.ip }, 'dashboard sign-in refused: malformed, unknown, revoked or expired key');
        throw new RunsetError('unauthorized', 'that API key is malformed, unknown or revoked, or has expired');
      }
      // A runner machine's key opens no dashboard: it may use the worker protocol only.
      if (key.role === 'worker') throw new RunsetError('forbidden', `the dashboard needs a read, trigger or admin key; ${describeRights(key)}`);
      const { sessionId, session } = await sessions.signIn(key);
      reply.header('Set-Cookie', sessionCookie(sessionId, { secure: isHttps(request), maxAgeSeconds: SESSION_TTL_MS / 1000 }));
      reply.header('Cache-Control', 'no-store');
      request.log.info({ key: key.id }, 'dashboard session started');
      return toInfo(session);
    },
  );

  api.get(
    '/session',
    {
      schema: {
        summary: 'The current dashboard session: its key and CSRF token',
        description: 'How the dashboard learns who it is signed in as after a reload.',
        tags: ['Dashboard session'],
        operationId: 'getSession',
        security: [{ sessionCookie: [] }],
        response: { 200: named(SessionInfo, 'The session of the cookie sent'), ...problems(401) },
      },
    },
    async (request, reply) => {
      const session = await currentSession(request, sessions);
      if (!session) throw new RunsetError('unauthorized', 'no dashboard session: sign in with POST /api/v0/session');
      reply.header('Cache-Control', 'no-store');
      return toInfo(session);
    },
  );

  api.delete(
    '/session',
    {
      schema: {
        summary: 'Sign out of the dashboard',
        description: 'Ends the session of the cookie sent (if any) and clears the cookie.',
        tags: ['Dashboard session'],
        operationId: 'deleteSession',
        security: [{ sessionCookie: [] }],
        response: { 204: { type: 'null', description: 'Signed out; the cookie is cleared.' }, ...problems(...BODY_PROBLEMS, 403) },
      },
    },
    async (request, reply) => {
      const session = await currentSession(request, sessions);
      if (session) {
        // Signing someone out is a write too: another site must not be able to.
        const refusal = crossSiteRefusal(request, session);
        if (refusal) throw new RunsetError('csrf_rejected', refusal);
        await sessions.signOut(session);
      }
      return clearCookie(request, reply).code(204).send();
    },
  );
  return Promise.resolve();
};

function currentSession(request: FastifyRequest, sessions: SessionAuthenticator): Promise<ActiveSession | undefined> {
  return sessions.authenticate(readCookie(request.headers.cookie, SESSION_COOKIE));
}

function clearCookie(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.header('Set-Cookie', sessionCookie('', { secure: isHttps(request), maxAgeSeconds: 0 }));
}

/**
 * Secure whenever the browser reached us over HTTPS, directly or through a proxy
 * that says so. Trusting X-Forwarded-Proto here is safe: a client that lies
 * about it only makes its own cookie stricter.
 */
export function isHttps(request: FastifyRequest): boolean {
  const forwarded = request.headers['x-forwarded-proto'];
  const proto = typeof forwarded === 'string' ? forwarded.split(',')[0]?.trim() : undefined;
  return request.protocol === 'https' || proto === 'https';
}

/** The session's key with what it may do, so the dashboard shows only what the key may use. */
function toInfo(session: ActiveSession): SessionInfo {
  const { id, name, role, envs, expiresAt } = session.key;
  return {
    key: { id, name, role, envs, expiresAt },
    operations: allowedOperations(session.key),
    csrfToken: session.csrfToken,
    expiresAt: session.expiresAt,
  };
}
