/**
 * GET /api/health — for load balancers and readiness probes: answers 200 when
 * this process can read its store, 503 otherwise. No key needed; it reveals
 * nothing but that.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../../store/store.js';

const Health = Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]) }, { additionalProperties: false });

export const healthRoute: FastifyPluginAsync<{ store: Store }> = (app, { store }) => {
  app.get(
    '/health',
    { schema: { summary: 'Readiness: can this process read its store?', operationId: 'health', response: { 200: Health, 503: Health } } },
    async (request, reply) => {
      try {
        await store.getSet('00000000-0000-4000-8000-000000000000');
        return { status: 'ok' as const };
      } catch (err) {
        request.log.warn({ err }, 'health check: store unreachable');
        return reply.code(503).send({ status: 'unavailable' as const });
      }
    },
  );
  return Promise.resolve();
};
