/**
 * Dashboard extensions on Test Run Sets: the list (newest first, cursor paged),
 * a set's details (environment and overrides, secret values masked) and "run
 * again". Seed shapes are untouched: these are new paths beside them.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from '../../core/typebox.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { RunsetError } from '../../core/errors.js';
import { setPhase } from '../../core/states.js';
import type { TestRunSetRecord } from '../../core/types.js';
import { CreateTestRunSetResult, LABEL_KEY, statusDocument } from '../../core/wire.js';
import { ListTestRunSetsQuery, RerunTestRunSetBody, SET_PAGE_LIMIT, TestRunSetDetails, TestRunSetPage, type TestRunSetSummary } from '../../core/wire-dashboard.js';
import { MASK } from '../../secrets/index.js';
import { rerunSet } from '../../sets/create.js';
import type { AppDeps } from '../deps.js';
import { findSet, setMaker } from './test-run-sets.js';
import { listableEnvs } from '../../auth/policy.js';
import { BODY_PROBLEMS, named, problems, SECURED, SetIdParams } from './common.js';


const LABEL_KEY_PATTERN = new RegExp(LABEL_KEY);

export const setBrowseRoutes: FastifyPluginAsync<{ deps: AppDeps }> = (app, { deps }) => {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.get(
    '/test-run-sets',
    {
      schema: {
        summary: 'List Test Run Sets, newest first',
        description: 'Cursor paging: pass the nextCursor of a page as ?cursor= to get the next one, with the same filters.',
        tags: ['Test Run Sets'],
        operationId: 'listTestRunSets',
        security: SECURED,
        querystring: ListTestRunSetsQuery,
        response: { 200: named(TestRunSetPage, 'One page of sets, newest first, and the cursor of the next'), ...problems(400, 401) },
      },
    },
    async (request) => {
      const { env, status, cursor } = request.query;
      const labels = labelFilter(request.query.label);
      const limit = request.query.limit === undefined ? SET_PAGE_LIMIT.default : Number(request.query.limit);
      if (limit < 1 || limit > SET_PAGE_LIMIT.max) throw new RunsetError('invalid_query', `query parameter limit must be 1-${SET_PAGE_LIMIT.max} (default ${SET_PAGE_LIMIT.default}); got "${String(request.query.limit)}"`);
      const envs = request.apiKey ? listableEnvs(request.apiKey, env) : [];
      const page = envs?.length === 0 ? { sets: [], nextCursor: null } : await deps.store.setViews.list({ env, envs, status, limit, cursor, labels });
      return { testRunSets: page.sets.map(toSummary), nextCursor: page.nextCursor };
    },
  );

  api.get(
    '/test-run-sets/:id/details',
    {
      schema: {
        summary: "A set's environment and overrides (secret values masked)",
        description: 'What the set was created with, its fail-fast limit, who cancelled it, if anyone, where it waits in its environment\'s queue (`queue`), if it does, and its phase (a worker preparing its members: `preparing`, `held`).',
        tags: ['Test Run Sets'],
        operationId: 'getTestRunSetDetails',
        security: SECURED,
        params: SetIdParams,
        response: { 200: named(TestRunSetDetails, "The set's environment, overrides and cancellation"), ...problems(400, 401, 404) },
      },
    },
    async (request) => {
      const set = await findSet(deps, request.params.id, request.apiKey);
      const [asked, control, queue, held] = await Promise.all([
        deps.store.setViews.asked(set.id), deps.store.sets.control(set.id), deps.store.setViews.queuePlace(set.id), deps.store.setViews.held(set.id),
      ]);
      const version = asked?.suiteVersion ?? null;
      const suite = version ? await deps.store.suiteVersions.get(version) : undefined;
      return {
        id: set.id,
        env: set.env,
        overrides: Object.entries(asked?.overrides ?? {}).map(([name, value]) =>
          value.kind === 'plain' ? { name, value: value.value, secret: false } : { name, value: MASK, secret: true },
        ),
        maxFailures: control?.maxFailures ?? null,
        cancellation: control?.cancellation ?? null,
        labels: asked?.labels ?? {},
        suite: version ? { id: version, names: suite?.names ?? [], commit: suite?.commit ?? null } : null,
        select: asked?.selection ?? null,
        queue,
        phase: setPhase(set.status, queue !== null, held.reduce((sum, h) => sum + h.members, 0)),
        held,
        failing: set.failing,
      };
    },
  );

  api.post(
    '/test-run-sets/:id/rerun',
    {
      schema: {
        summary: 'Run a set again: same environment, overrides and selection, current tests',
        description:
          'Creates a new set from an earlier one; counts against the key\'s sets per minute like a create. With `{"only": "failed"}` it holds only the members that ended FAIL (cancelled ones included) and carries the label `rerun-of`; the earlier set must have ended.',
        tags: ['Test Run Sets'],
        operationId: 'rerunTestRunSet',
        security: SECURED,
        params: SetIdParams,
        body: Type.Optional(named(RerunTestRunSetBody)),
        response: { 200: named(CreateTestRunSetResult, 'The new set'), ...problems(...BODY_PROBLEMS, 401, 403, 404, 409, 422, 429) },
      },
      // No body is today's "run again": validate it as the empty body, which the schema accepts.
      preValidation: (request, _reply, done) => {
        request.body ??= {};
        done();
      },
    },
    async (request, reply) => {
      const earlier = await findSet(deps, request.params.id, request.apiKey);
      return { testRunSetId: await rerunSet(setMaker(deps, request, reply), earlier, request.body?.only) };
    },
  );
  return Promise.resolve();
};

/** `?label=key:value` (repeatable) as the labels a set must all carry. */
function labelFilter(given: string | readonly string[] | undefined): Record<string, string> | undefined {
  if (given === undefined || given.length === 0) return undefined;
  const labels: Record<string, string> = {};
  for (const text of typeof given === 'string' ? [given] : given) {
    const at = text.indexOf(':');
    const key = text.slice(0, Math.max(at, 0));
    if (at < 0 || !LABEL_KEY_PATTERN.test(key)) {
      throw new RunsetError('invalid_query', `query parameter label must be key:value with a key of 1-64 a-z, 0-9, "_", "." and "-", such as branch:main; got "${text.slice(0, 64)}"`);
    }
    labels[key] = text.slice(at + 1);
  }
  return labels;
}

function toSummary(set: TestRunSetRecord): TestRunSetSummary {
  return { ...statusDocument(set), env: set.env };
}
