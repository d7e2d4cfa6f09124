/**
 * GET /api/v0/workers — the live worker processes of this deployment (from the
 * workers registry, src/scheduler/registration.ts), each with the members it runs.
 * A key limited to environments sees only the members of sets it may see.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { WorkerList } from '../../core/wire-dashboard.js';
import type { ApiKeyRecord } from '../../core/keys.js';
import type { Store, WorkerInfo } from '../../store/store.js';
import type { AppDeps } from '../deps.js';
import { named, problems, SECURED } from './common.js';
import { seesSetEnv } from '../permission.js';

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
        response: { 200: named(WorkerList, 'The live workers'), ...problems(401, 403) },
      },
    },
    async (request) => {
      const workers = await deps.store.workers.list(deps.workerStaleMs);
      return { workers: await onlyVisibleMembers(deps.store, workers, request.apiKey), staleAfterMs: deps.workerStaleMs };
    },
  );
  return Promise.resolve();
};

/** The workers with only the running members of sets the key may see (every one for an unscoped key). */
async function onlyVisibleMembers(store: Store, workers: WorkerInfo[], key: ApiKeyRecord | null): Promise<WorkerInfo[]> {
  if (key?.envs === null) return workers;
  const setIds = [...new Set(workers.flatMap((w) => w.running.map((m) => m.setId)))];
  const sets = setIds.length > 0 ? await store.sets.getMany(setIds) : [];
  const visible = new Set(sets.filter((s) => seesSetEnv(key, s.env)).map((s) => s.id));
  return workers.map((w) => ({ ...w, running: w.running.filter((m) => visible.has(m.setId)) }));
}
