/**
 * GET /api/v0/webhook-deliveries?setId= — what was sent to the configured
 * webhooks about a set, and how each attempt went (status code, time, error).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { WebhookDeliveriesQuery, WebhookDeliveryList } from '../../core/wire-webhooks.js';
import type { AppDeps } from '../deps.js';
import { named, problems, SECURED } from './common.js';
import { findSet } from './test-run-sets.js';

export const webhookRoutes: FastifyPluginAsync<{ deps: AppDeps }> = (app, { deps }) => {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/webhook-deliveries',
    {
      schema: {
        summary: "List a set's webhook deliveries, each with its attempts",
        description: 'Deliveries are made when a set starts (`set.started`) and ends (`set.finished`), one per matching webhook of runset.config.yaml.',
        operationId: 'listWebhookDeliveries',
        tags: ['Webhooks'],
        security: SECURED,
        querystring: WebhookDeliveriesQuery,
        response: { 200: named(WebhookDeliveryList, "The set's deliveries, oldest first, each with its attempts"), ...problems(400, 401, 404) },
      },
    },
    async (request) => {
      const set = await findSet(deps, request.query.setId.toLowerCase(), request.apiKey);
      const [deliveries, eventsWaiting] = await Promise.all([deps.store.webhooks.listDeliveries(set.id), deps.store.webhooks.eventsWaiting(set.id)]);
      return { deliveries: deliveries.map(({ history, attempts: _count, ...delivery }) => ({ ...delivery, attempts: history })), eventsWaiting };
    },
  );
  return Promise.resolve();
};
