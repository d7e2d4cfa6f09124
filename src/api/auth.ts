import type { FastifyReply, FastifyRequest } from 'fastify';
import { problemOf } from '../core/errors.js';
import type { ApiKeyRecord } from '../core/types.js';
import type { KeyAuthenticator } from '../auth/keys.js';
import { sendProblem } from './problems.js';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: ApiKeyRecord;
  }
}

/** onRequest hook: the same 401 for a missing, malformed, unknown or revoked key. */
export function requireKey(auth: KeyAuthenticator) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const key = await auth.authenticate(request.headers.authorization);
    if (!key) {
      await sendProblem(reply, problemOf('unauthorized', 'send Authorization: Bearer <API key> with a live key (create one with `runset keys create --name NAME`)'));
      return;
    }
    request.apiKey = key;
  };
}
