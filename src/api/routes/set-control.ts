/**
 * POST /api/v0/test-run-sets/{id}/cancel — ends a set early: its waiting
 * members at once, its running ones stopped by the workers running them (told
 * through the store within moments, on any machine). Answers the set's status.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { RunsetError } from '../../core/errors.js';
import { CancelTestRunSetResult } from '../../core/wire-control.js';
import { CANCELLED } from '../../sets/cancel.js';
import type { AppDeps } from '../deps.js';
import { BODY_PROBLEMS, named, problems, SECURED, SetIdParams } from './common.js';
import { statusDocument } from '../../core/wire.js';
import { findSet } from './test-run-sets.js';

export const setControlRoutes: FastifyPluginAsync<{ deps: AppDeps }> = (app, { deps }) => {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/test-run-sets/:id/cancel',
    {
      schema: {
        summary: 'Cancel a set: its unfinished members end FAIL with the error "cancelled", and so does the set',
        description:
          'Waiting members end at once; running ones are stopped (their whole process tree) by the worker running them. ' +
          'Cancelling a set that has ended changes nothing and answers 200 with its status and `cancelled: false`.',
        tags: ['Test Run Sets'],
        operationId: 'cancelTestRunSet',
        security: SECURED,
        params: SetIdParams,
        response: { 200: named(CancelTestRunSetResult, "The set's status after the cancel, and whether this request ended it"), ...problems(...BODY_PROBLEMS, 401, 403, 404) },
      },
    },
    async (request) => {
      const id = request.params.id.toLowerCase();
      const key = request.apiKey;
      await findSet(deps, id, key); // a set the key may not see is 404 before anything changes
      const result = await deps.store.sets.cancel(id, { byKeyId: key?.id ?? null, byKeyName: key?.name ?? null, error: CANCELLED });
      if (!result.found) throw new RunsetError('not_found', `no Test Run Set with id ${request.params.id}`);
      const set = await findSet(deps, id, key);
      if (result.cancelled) request.log.info({ set: id, key: key?.id }, 'test run set cancelled');
      return { ...statusDocument(set), cancelled: result.cancelled };
    },
  );
  return Promise.resolve();
};
