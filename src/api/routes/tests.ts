/**
 * Test history: the tests of an environment with their recent outcomes and
 * flakiness (GET /tests), and one test's ended runs (GET /tests/history), both
 * cursor paged. The store reads the runs (store.history); what they mean is
 * src/history/flakiness.ts. A key limited to environments gets 404 for any
 * other environment, as if it did not exist.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { echo, RunsetError } from '../../core/errors.js';
import type { ApiKeyRecord } from '../../core/keys.js';
import { HISTORY_PAGE_LIMIT, ListTestsQuery, TEST_PAGE_LIMIT, TestHistory, TestHistoryQuery, TestList } from '../../core/wire-tests.js';
import { firstLine, HISTORY_WINDOW, isCancelled, summarize } from '../../history/flakiness.js';
import type { SuiteConfig } from '../../config/suite.js';
import type { AppDeps } from '../deps.js';
import { seesSetEnv } from '../permission.js';
import { named, problems, SECURED } from './common.js';

export const testHistoryRoutes: FastifyPluginAsync<{ deps: AppDeps }> = (app, { deps }) => {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get(
    '/tests',
    {
      schema: {
        summary: "An environment's tests with their recent outcomes, pass and flaky rates",
        description:
          'Every test with an ended run in the environment, by name (cursor on the name: pass nextCursor as ?cursor= with the same env and name filter). ' +
          'Each carries its last 50 ended runs, newest first, and figures over them; cancelled runs are shown but not counted.',
        tags: ['Tests'],
        operationId: 'listTests',
        security: SECURED,
        querystring: ListTestsQuery,
        response: { 200: named(TestList, 'One page of tests, by name, and the cursor of the next'), ...problems(400, 401, 404) },
      },
    },
    async (request) => {
      const env = visibleEnvironment(deps.suite(), request.apiKey, request.query.env);
      const limit = pageLimit(request.query.limit, TEST_PAGE_LIMIT);
      const page = await deps.store.history.listTests({ env, nameContains: request.query.name, limit, window: HISTORY_WINDOW, cursor: request.query.cursor });
      return { environment: env, tests: page.tests.map((t) => ({ name: t.name, type: t.type, ...summarize(t.runs) })), nextCursor: page.nextCursor };
    },
  );

  api.get(
    '/tests/history',
    {
      schema: {
        summary: "One test's ended runs in an environment, newest first",
        description: 'Cursor paging: pass the nextCursor of a page as ?cursor= (with the same env and name) to get older runs.',
        tags: ['Tests'],
        operationId: 'getTestHistory',
        security: SECURED,
        querystring: TestHistoryQuery,
        response: { 200: named(TestHistory, "One page of the test's runs, newest first, and the cursor of the next"), ...problems(400, 401, 404) },
      },
    },
    async (request) => {
      const env = visibleEnvironment(deps.suite(), request.apiKey, request.query.env);
      const limit = pageLimit(request.query.limit, HISTORY_PAGE_LIMIT);
      const { name, cursor } = request.query;
      const page = await deps.store.history.testRuns({ env, name, limit, cursor });
      const runs = page.runs.map((r) => ({ ...r, error: firstLine(r.error), cancelled: isCancelled(r.error) }));
      return { environment: env, name, runs, nextCursor: page.nextCursor };
    },
  );
  return Promise.resolve();
};

/**
 * The environment asked for, when the key may see it and it is configured. One
 * the key may not see is 404 whether or not it exists, so a limited key learns
 * nothing of others; an unknown one is 400 naming those the key may see.
 */
export function visibleEnvironment(config: SuiteConfig, key: ApiKeyRecord | null, env: string): string {
  if (!seesSetEnv(key, env)) throw new RunsetError('not_found', `no environment "${echo(env)}" among those this key may see`);
  if (!config.environments.has(env)) {
    const known = [...config.environments.keys()].filter((e) => seesSetEnv(key, e));
    throw new RunsetError('unknown_environment', `query parameter env: "${echo(env)}" is not a configured environment; known environments: ${known.join(', ')}`);
  }
  return env;
}

function pageLimit(given: string | undefined, limits: { default: number; max: number }): number {
  const limit = given === undefined ? limits.default : Number(given);
  if (limit < 1 || limit > limits.max) throw new RunsetError('invalid_query', `query parameter limit must be 1-${limits.max} (default ${limits.default}); got "${given}"`);
  return limit;
}
