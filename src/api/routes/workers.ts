/**
 * GET /api/v0/workers — the live worker processes of this deployment (from the
 * workers registry, src/scheduler/registration.ts), each with the members it runs.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { WorkerList } from '../../core/wire-dashboard.js';
import type { AppDeps } from '../app.js';
import { named, problems, SECURED } from './common.js';

export const workerRoutes: FastifyPluginAsync<{ deps: AppDeps }> = (app, { deps }) => {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/workers',
    {
      schema: {
        summary: 'List the live worker processes and what each runs',
        description: 'Worker processes that heartbeated recently, each with its slots and the members it runs.',
        tags: ['Workers'],
        operationId: 'listWorkers',
        security: SECURED,
        response: { 200: named(WorkerList, 'The live workers'), ...problems(401) },
      },
    },
    async () => ({ workers: await deps.store.listWorkers(deps.workerStaleMs), staleAfterMs: deps.workerStaleMs }),
  );
  return Promise.resolve();
};
