/**
 * GET /api/v0/artifacts/{id} — one artifact's bytes (a failure's screenshot,
 * trace, video), streamed with its content type, behind the same credential
 * check as every /v0 route. Listed per member by GET …/test-runs. The
 * dashboard's trace viewer (src/dashboard/trace-viewer.ts) reads traces here
 * with the session cookie.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Static } from 'typebox';
import { RunsetError } from '../../core/errors.js';
import type { ArtifactRecord } from '../../core/types.js';
import type { Artifact } from '../../core/wire.js';
import type { AppDeps } from '../deps.js';
import { problems, SECURED, uuidParams } from './common.js';
import { seesSetEnv } from '../permission.js';

const ArtifactParams = uuidParams('Artifact id (uuid), from a member\'s `artifacts`.');

/** The path a member's artifact list points at (relative to the server's root). */
export function artifactUrl(id: string): string {
  return `/api/v0/artifacts/${id}`;
}

/** A set's artifacts as the members endpoint lists them, by member id. */
export function artifactsByRun(records: readonly ArtifactRecord[]): Map<string, Artifact[]> {
  const byRun = new Map<string, Artifact[]>();
  for (const a of records) {
    const item: Artifact = { id: a.id, name: a.name, contentType: a.contentType, size: a.size, url: artifactUrl(a.id) };
    const list = byRun.get(a.runId);
    if (list) list.push(item);
    else byRun.set(a.runId, [item]);
  }
  return byRun;
}

export const artifactRoutes: FastifyPluginAsync<{ deps: AppDeps }> = (app, { deps }) => {
  // Not the TypeBox provider: the 200 answer is a byte stream, which its typing cannot express.
  app.get<{ Params: Static<typeof ArtifactParams> }>(
    '/artifacts/:id',
    {
      schema: {
        summary: 'Download an artifact (screenshot, trace, video) of a Test Run',
        description:
          'The bytes, with the artifact\'s content type, under `Content-Security-Policy: default-src \'none\'; sandbox`: text and images `inline` (a browser shows them), the rest as `attachment`. Traces open in the dashboard\'s `/trace-viewer/` or with `npx playwright show-trace <file>`.',
        tags: ['Artifacts'],
        operationId: 'getArtifact',
        security: SECURED,
        params: ArtifactParams,
        response: {
          200: {
            description: 'The artifact, as stored',
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          },
          ...problems(400, 401, 404),
        },
      },
    },
    async (request, reply) => {
      const id = request.params.id.toLowerCase();
      const found = await deps.store.artifacts.get(id);
      // An artifact of a set the key may not see is as absent as the set.
      const set = found && request.apiKey?.envs ? await deps.store.sets.get(found.setId) : undefined;
      const artifact = found && (!request.apiKey?.envs || (set && seesSetEnv(request.apiKey, set.env))) ? found : undefined;
      const stream = artifact && (await deps.artifacts?.open(artifact.location));
      if (!artifact || !stream) throw new RunsetError('not_found', `no artifact with id ${request.params.id} (it may have passed its retention)`);
      const filename = artifact.name.replace(/[^A-Za-z0-9._-]/g, '_');
      // Text and pictures open in the browser (an error context, an attached HTML page); the CSP
      // below keeps them inert. The rest (traces, videos) is saved.
      const disposition = /^(text|image)\//.test(artifact.contentType) ? 'inline' : 'attachment';
      // Playwright names text/markdown without a charset; it writes UTF-8, and titles hold `›`.
      const type = artifact.contentType.startsWith('text/') && !/charset=/i.test(artifact.contentType) ? `${artifact.contentType}; charset=utf-8` : artifact.contentType;
      return reply
        .type(type)
        .header('content-length', String(artifact.size))
        .header('content-disposition', `${disposition}; filename="${filename}"`)
        // The bytes come from the tests under test: never let a browser run them on the API's origin.
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .send(stream);
    },
  );
  return Promise.resolve();
};
