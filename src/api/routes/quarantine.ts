/**
 * Quarantine on the API: list, add (or replace) and end the quarantine of an
 * environment's tests. A set reads the names quarantined when it is planned
 * (src/sets/plan.ts); the status rule is failsSet (src/core/moves.ts). A key
 * limited to environments sees and changes only theirs: any other is 404, as
 * for test history.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { echo, RunsetError } from '../../core/errors.js';
import { QUARANTINE_DAYS } from '../../core/quarantine.js';
import { QuarantineAdded, QuarantineBody, QuarantineList, QuarantineQuery, RemoveQuarantineQuery, type QuarantineEntryView } from '../../core/wire-quarantine.js';
import { testsForEnvironment } from '../../config/suite.js';
import type { QuarantineEntry } from '../../store/quarantine.js';
import type { AppDeps } from '../deps.js';
import { seesSetEnv } from '../permission.js';
import { BODY_PROBLEMS, named, problems, SECURED } from './common.js';
import { visibleEnvironment } from './tests.js';

const DAY_MS = 86_400_000;

function viewOf(entry: QuarantineEntry): QuarantineEntryView {
  const { createdByKeyId, createdByName, ...rest } = entry;
  return { ...rest, createdBy: createdByKeyId ? { keyId: createdByKeyId, keyName: createdByName ?? '' } : null };
}

/** The end asked for, or the default: refused when past or beyond the longest quarantine. */
function untilOf(until: string | undefined, now: number): string {
  if (until === undefined) return new Date(now + QUARANTINE_DAYS.default * DAY_MS).toISOString();
  const at = Date.parse(until);
  const latest = now + QUARANTINE_DAYS.max * DAY_MS;
  if (!(at > now) || at > latest) {
    throw new RunsetError('invalid_until', `until: ${echo(until)} is ${at > now ? `more than ${QUARANTINE_DAYS.max} days ahead` : 'not in the future'}; give a time between now and ${new Date(latest).toISOString()}, or none for ${QUARANTINE_DAYS.default} days`);
  }
  return new Date(at).toISOString();
}

export const quarantineRoutes: FastifyPluginAsync<{ deps: AppDeps }> = (app, { deps }) => {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get(
    '/quarantine',
    {
      schema: {
        summary: 'List the quarantined tests in force, by environment and name',
        description: 'Ended quarantines (past their `until`) are not listed. `?env=` narrows to one environment; a key limited to environments sees only theirs.',
        tags: ['Quarantine'],
        operationId: 'listQuarantine',
        security: SECURED,
        querystring: QuarantineQuery,
        response: { 200: named(QuarantineList, 'The quarantines in force'), ...problems(400, 401, 404) },
      },
    },
    async (request) => {
      const key = request.apiKey;
      const { env } = request.query;
      const envs = env !== undefined ? [visibleEnvironment(deps.suite(), key, env)] : (key?.envs ?? null);
      return { quarantine: (await deps.store.quarantine.list(envs)).map(viewOf) };
    },
  );

  api.post(
    '/quarantine',
    {
      schema: {
        summary: 'Quarantine a test of an environment: it still runs, but its failure no longer fails a set',
        description:
          'Applies to sets created from now on (a set keeps the quarantine it was planned with). Replaces the entry of a test already quarantined (201 when new, 200 when replaced). ' +
          `Ends by itself at \`until\` (default ${QUARANTINE_DAYS.default} days, at most ${QUARANTINE_DAYS.max}). \`knownTest\` false warns that no test of this name has run or is declared.`,
        tags: ['Quarantine'],
        operationId: 'addQuarantine',
        security: SECURED,
        body: QuarantineBody,
        response: { 200: named(QuarantineAdded, 'Replaced'), 201: named(QuarantineAdded, 'Added'), ...problems(...BODY_PROBLEMS, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const key = request.apiKey;
      const { name, reason } = request.body;
      const env = visibleEnvironment(deps.suite(), key, request.body.env);
      const until = untilOf(request.body.until, Date.now());
      const { created, entry } = await deps.store.quarantine.put({ env, name, reason, until, createdByKeyId: key?.id ?? null, createdByName: key?.name ?? null });
      const declared = testsForEnvironment(deps.suite(), env).some((t) => t.name === name);
      const knownTest = declared || (await deps.store.history.testRuns({ env, name, limit: 1 })).runs.length > 0;
      request.log.info({ env, created }, 'test quarantined');
      return reply.code(created ? 201 : 200).send({ entry: viewOf(entry), knownTest });
    },
  );

  api.delete(
    '/quarantine',
    {
      schema: {
        summary: "End a test's quarantine now",
        description: 'Sets created from now on fail on its failures again; sets already created keep the quarantine they were planned with. 404 when the test is not quarantined.',
        tags: ['Quarantine'],
        operationId: 'removeQuarantine',
        security: SECURED,
        querystring: RemoveQuarantineQuery,
        response: { 204: { type: 'null', description: 'Ended' }, ...problems(...BODY_PROBLEMS, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const key = request.apiKey;
      const { env, name } = request.query;
      if (!seesSetEnv(key, env) || !(await deps.store.quarantine.remove(env, name))) {
        throw new RunsetError('not_quarantined', `test "${echo(name)}" is not quarantined in environment "${echo(env)}" (see GET /api/v0/quarantine?env=${encodeURIComponent(env.slice(0, 64))})`);
      }
      request.log.info({ env }, 'quarantine ended');
      return reply.code(204).send(null);
    },
  );
  return Promise.resolve();
};
