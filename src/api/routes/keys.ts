/**
 * GET/POST/DELETE /api/v0/keys — key management over the API (admin keys only,
 * by the policy), so an admin can manage keys from the dashboard. A new key's
 * token is answered once; only its SHA-256 is stored. An admin limited to
 * environments sees, makes and revokes only keys within them; any other key is
 * answered 404, as if absent.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { RunsetError } from '../../core/errors.js';
import { DurationError } from '../../core/duration.js';
import type { ApiKeyRecord } from '../../core/keys.js';
import { CreateKeyBody, CreatedKey, KeyList, type KeyView } from '../../core/wire-keys.js';
import { createKey, expiryAfter } from '../../auth/keys.js';
import { grantRefusal, managesKey } from '../../auth/policy.js';
import type { AppDeps } from '../deps.js';
import { BODY_PROBLEMS, named, problems, SECURED, uuidParams } from './common.js';

const KeyParams = uuidParams('Key id (uuid), from GET /api/v0/keys.');

export const keyRoutes: FastifyPluginAsync<{ deps: AppDeps }> = (app, { deps }) => {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const actorOf = (key: ApiKeyRecord | null): ApiKeyRecord => {
    if (!key) throw new RunsetError('unauthorized', 'no key'); // the /v0 hook has already refused this
    return key;
  };

  api.get(
    '/keys',
    {
      schema: {
        summary: 'List API keys (never their tokens)',
        description: 'Admin keys only. An admin limited to environments sees only keys within them.',
        operationId: 'listKeys',
        tags: ['Keys'],
        security: SECURED,
        response: { 200: named(KeyList, 'The keys this admin manages, newest first'), ...problems(401, 403) },
      },
    },
    async (request) => {
      const actor = actorOf(request.apiKey);
      const keys = await deps.store.keys.list();
      return { keys: keys.filter((k) => managesKey(actor, k)).map(toView) };
    },
  );

  api.post(
    '/keys',
    {
      schema: {
        summary: 'Create an API key; its token is answered this once',
        description: 'Admin keys only. A key can never be given more than its maker has (role, environments). Default role: trigger.',
        operationId: 'createKey',
        tags: ['Keys'],
        security: SECURED,
        body: named(CreateKeyBody),
        response: { 201: named(CreatedKey, 'Created: the token is in this answer only'), ...problems(...BODY_PROBLEMS, 401, 403) },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request.apiKey);
      const { name, role = 'trigger', envs = null, expires } = request.body;
      const refusal = grantRefusal(actor, { role, envs });
      if (refusal) throw new RunsetError('forbidden', refusal);
      const known = [...deps.suite().environments.keys()];
      const unknown = envs?.filter((e) => !known.includes(e)) ?? [];
      if (unknown.length > 0) throw new RunsetError('unknown_environment', `envs names ${unknown.join(', ')}; known environments: ${known.join(', ')}`);
      const expiresAt = expires === undefined ? null : expiryOf(expires);
      const created = await createKey(deps.store, name, { role, envs, expiresAt });
      request.log.info({ key: created.key.id, by: actor.id, role, envs }, 'key created');
      reply.header('Cache-Control', 'no-store');
      return reply.code(201).send({ key: toView(created.key), token: created.token });
    },
  );

  api.delete(
    '/keys/:id',
    {
      schema: {
        summary: 'Revoke an API key (it stops working within a second)',
        description: 'Admin keys only; a key outside this admin\'s environments is 404, as if absent.',
        operationId: 'revokeKey',
        tags: ['Keys'],
        security: SECURED,
        params: KeyParams,
        response: { 204: { type: 'null', description: 'Revoked (revoking twice is not an error).' }, ...problems(...BODY_PROBLEMS, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request.apiKey);
      const id = request.params.id.toLowerCase();
      const target = (await deps.store.keys.list()).find((k) => k.id === id);
      if (!target || !managesKey(actor, target)) throw new RunsetError('not_found', `no key with id ${request.params.id}`);
      await deps.store.keys.revoke(id);
      request.log.info({ key: id, by: actor.id }, 'key revoked');
      return reply.code(204).send(null);
    },
  );
  return Promise.resolve();
};

function expiryOf(expires: string): string {
  try {
    return expiryAfter(expires);
  } catch (err) {
    if (err instanceof DurationError) throw new RunsetError('invalid_body', `body.expires: ${err.message}`);
    throw err;
  }
}

function toView(key: ApiKeyRecord): KeyView {
  return {
    id: key.id,
    name: key.name,
    role: key.role,
    envs: key.envs,
    expiresAt: key.expiresAt,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    revokedAt: key.revokedAt,
  };
}
