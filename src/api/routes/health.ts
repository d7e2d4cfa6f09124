/**
 * GET /api/health — for load balancers and readiness probes: answers 200 when
 * this process can read its store, 503 otherwise. No key needed; it reveals
 * nothing but that.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Store } from '../../store/store.js';
import { HealthSchema } from '../../core/wire.js';
import { named, problems, PUBLIC } from './common.js';

export const healthRoute: FastifyPluginAsync<{ store: Store }> = (app, { store }) => {
  app.get(
    '/health',
    {
      schema: {
        summary: 'Readiness: can this process read its store?',
        description: 'For load balancers and readiness probes. Public: it reveals nothing but whether the store answers.',
        tags: ['Health'],
        operationId: 'health',
        security: PUBLIC,
        response: {
          ...problems(),
          200: named(HealthSchema, 'Ready: the store answered'),
          503: named(HealthSchema, 'Not ready: the store did not answer (or the server is shutting down)'),
        },
      },
    },
    async (request, reply) => {
      try {
        await store.sets.get('00000000-0000-4000-8000-000000000000');
        return { status: 'ok' as const };
      } catch (err) {
        request.log.warn({ err }, 'health check: store unreachable');
        return reply.code(503).send({ status: 'unavailable' as const });
      }
    },
  );
  return Promise.resolve();
};
