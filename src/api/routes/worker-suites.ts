/**
 * Suite versions' archives for workers over HTTP: GET /api/v0/worker/suites/{id}
 * streams a version's archive (src/core/suites.ts) as stored, for a worker to
 * check its hash, unpack and run. Through the same storeLink as every worker
 * route, so a direct worker and one over HTTP fetch a version the same way.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Static } from 'typebox';
import { Type } from '../../core/typebox.js';
import { RunsetError } from '../../core/errors.js';
import { SuiteArchiveGoneError } from '../../core/suites.js';
import { SuiteId } from '../../core/wire-suites.js';
import type { WorkerLink } from '../../worker-link/link.js';
import { BEARER_ONLY, problems } from './common.js';
import type { SuiteVersionsStore } from '../../store/suite-versions.js';

const SuiteParams = Type.Object({ id: SuiteId });

export const workerSuiteRoutes: FastifyPluginAsync<{ link: Pick<WorkerLink, 'suiteArchive'>; suites: Pick<SuiteVersionsStore, 'ranIn'> }> = (app, { link, suites }) => {
  // Not the TypeBox provider: the 200 answer is a byte stream, which its typing cannot express.
  app.get<{ Params: Static<typeof SuiteParams> }>(
    '/suites/:id',
    {
      schema: {
        summary: 'Download a suite version\'s archive (streamed), to run the members of sets that name it',
        description:
          'The archive as uploaded (a gzipped tar), application/gzip; its SHA-256 is `{id}`: check it before unpacking. 404 when the version is unknown, was removed by retention (no set or name used it), or (a key limited to environments) no set of those environments ran it. Worker protocol: for `runset worker --url`, with a key of role worker (or admin).',
        tags: ['Worker protocol'],
        operationId: 'getSuiteArchive',
        security: BEARER_ONLY,
        params: SuiteParams,
        response: {
          200: { description: 'The archive, as stored', content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } } },
          ...problems(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      // A key limited to environments fetches only what a set of theirs ran: the same 404 as an unknown version.
      const envs = request.apiKey?.envs;
      if (envs && !(await suites.ranIn(request.params.id, envs))) throw new RunsetError('not_found', `no suite version ${request.params.id} ran in this key's environments`);
      try {
        const bytes = await link.suiteArchive(request.params.id);
        return await reply.type('application/gzip').header('cache-control', 'private, max-age=31536000, immutable').send(bytes);
      } catch (err) {
        if (err instanceof SuiteArchiveGoneError) throw new RunsetError('not_found', err.message);
        throw err;
      }
    },
  );
  return Promise.resolve();
};
