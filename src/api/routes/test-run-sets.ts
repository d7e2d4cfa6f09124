/**
 * The seed operations (create, status) and the members extension.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '../../core/typebox.js';
import { RunsetError } from '../../core/errors.js';
import { passedAfterRetry } from '../../core/states.js';
import {
  CreateTestRunSetBody,
  CreateTestRunSetResult,
  TestRunList,
  TestRunSetStatus,
  statusDocument,
} from '../../core/wire.js';
import type { TestRunSetRecord } from '../../core/types.js';
import type { ApiKeyRecord } from '../../core/keys.js';
import { createRefusal } from '../../auth/policy.js';
import { seesSetEnv, setNotFound } from '../permission.js';
import { createSet, type SetMaker } from '../../sets/create.js';
import type { AppDeps } from '../deps.js';
import { artifactsByRun } from './artifacts.js';
import { BODY_PROBLEMS, named, problems, SECURED, SetIdParams } from './common.js';
import { noneMatchHits, preferredWait, statusEtag } from '../conditional.js';
import { DEFAULT_STATUS_WATCH, StatusWatch } from '../status-watch.js';

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Optional. The same key with the same body within 24 h returns the same testRunSetId; with another body, 422.',
    }),
  ),
});

export const testRunSetRoutes: FastifyPluginAsync<{ deps: AppDeps }> = (app, { deps }) => {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post(
    '/test-run-sets',
    {
      schema: {
        summary: 'Create a Test Run Set',
        description:
          'The seed operation: plans one member (Test Run) per test of the environment and answers its id at once; ' +
          'poll GET /v0/test-run-sets/{id} until SUCCESS or FAIL. Send `Idempotency-Key` to make retries safe. ' +
          'A set of an environment with `maxConcurrentSets` may wait WAITING in its queue (see its details). ' +
          'Extension `timeoutSeconds`: the set\'s deadline, at most the environment\'s `setTimeout` (400 `set_timeout_too_long` beyond it). ' +
          'Extension `concurrencyGroup`: the new set cancels the older unfinished sets of its environment in that group (`superseded by <id>`).',
        tags: ['Test Run Sets'],
        operationId: 'createTestRunSet',
        security: SECURED,
        body: named(CreateTestRunSetBody),
        headers: IdempotencyHeaders,
        response: { 200: named(CreateTestRunSetResult, 'The set was created (or this Idempotency-Key already created it)'), ...problems(...BODY_PROBLEMS, 401, 403, 422, 429) },
      },
    },
    async (request, reply) => {
      const refusal = request.apiKey && createRefusal(request.apiKey, request.body.env);
      if (refusal) throw new RunsetError('forbidden', refusal);
      return { testRunSetId: await createSet(setMaker(deps, request, reply), request.body, request.headers['idempotency-key']) };
    },
  );

  const watch = new StatusWatch(deps.store, { ...DEFAULT_STATUS_WATCH, onError: (err) => app.log.warn({ err }, 'reading watched sets failed') });
  // Waiting clients are answered (304) before the server waits for its requests to end.
  app.addHook('preClose', (done) => {
    watch.close();
    done();
  });

  api.get(
    '/test-run-sets/:id',
    {
      schema: {
        summary: 'Get the status of a Test Run Set',
        description:
          'The seed operation. Every answer carries an `ETag`. With `If-None-Match` naming it, the answer is 304 while nothing changed; ' +
          'add `Prefer: wait=N` (N ≤ 60 seconds) to be answered as soon as the status or a count changes, or with 304 after N seconds.',
        tags: ['Test Run Sets'],
        operationId: 'getTestRunSet',
        security: SECURED,
        params: SetIdParams,
        headers: ConditionalStatusHeaders,
        response: {
          200: named(TestRunSetStatus, 'The status of the set and the counts of its members by state; `ETag` names it'),
          304: { description: 'Not modified: the status is still the one `If-None-Match` names (after waiting, when asked to)', type: 'null' },
          ...problems(400, 401, 404),
        },
      },
    },
    // The path every CI pipeline polls: answered synchronously when the store
    // already holds the set (the embedded store's copy of its rows) and no
    // condition is asked, else awaited.
    (request, reply) => {
      const id = request.params.id.toLowerCase();
      const known = request.headers['if-none-match'] === undefined ? deps.store.sets.peek?.(id) : undefined;
      if (known && seesSetEnv(request.apiKey, known.env)) {
        const { etag, body } = servedStatus(known, reply);
        // Already the serializer's JSON, as bytes: sent as they are (Fastify
        // serialises no Buffer, nor encodes it again per request).
        void (reply as FastifyReply).header('etag', etag).type(JSON_TYPE).send(body);
        return;
      }
      return findSet(deps, id, request.apiKey).then((set) => answerStatus(watch, set, request, reply));
    },
  );

  api.get(
    '/test-run-sets/:id/test-runs',
    {
      schema: {
        summary: 'List the members (Test Runs) of a set',
        description: 'Each member with its state, attempts, timing, error, output tail (secrets masked) and artifacts.',
        tags: ['Test Run Sets'],
        operationId: 'listTestRuns',
        security: SECURED,
        params: SetIdParams,
        response: { 200: named(TestRunList, "The set's members, in plan order"), ...problems(400, 401, 404) },
      },
    },
    async (request) => {
      const set = await findSet(deps, request.params.id, request.apiKey);
      const [runs, artifacts, control] = await Promise.all([deps.store.sets.listRuns(set.id), deps.store.artifacts.list(set.id), deps.store.sets.control(set.id)]);
      const byRun = artifactsByRun(artifacts);
      // The members a key's cancel ended are those that got its error (nothing else sets it).
      const cancel = control?.cancellation;
      const byKey = cancel?.byKeyId ? { keyId: cancel.byKeyId, keyName: cancel.byKeyName ?? '' } : null;
      return {
        testRuns: runs.map((r) => ({
          id: r.id,
          name: r.name,
          type: r.type,
          status: r.status,
          attempts: r.attempts,
          starts: r.starts,
          restarts: r.restarts,
          startedAt: r.startedAt,
          endedAt: r.endedAt,
          durationMs: r.durationMs,
          error: r.error,
          output: r.output,
          flaky: passedAfterRetry(r.status, r.attempts),
          skipped: r.skipped,
          quarantined: r.quarantined,
          workerId: r.workerId,
          heldBy: r.heldBy,
          expectedMs: r.expectedMs,
          cancelledBy: byKey && r.status === 'FAIL' && r.error === cancel?.error ? byKey : null,
          artifacts: byRun.get(r.id) ?? [],
          cases: r.cases,
        })),
      };
    },
  );
  return Promise.resolve();
};

/** What Fastify's serializer answers JSON as. */
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The status answers of the rows a store peeks: each row's ETag and body,
 * serialised once by the route's own serializer and encoded once. A peeked row is never changed
 * (a write replaces it: Store.peek), so its answer cannot go stale, and it is
 * dropped with the row. Pipelines polling a set get the same answer until it
 * changes: no status document built and serialised again per request
 * (bench/README.md, "Issue 40 item 3").
 */
const answers = new WeakMap<object, { etag: string; body: Buffer }>();

function servedStatus(set: TestRunSetRecord, reply: FastifyReply): { etag: string; body: Buffer } {
  const kept = answers.get(set);
  if (kept) return kept;
  // The route's 200 serializer (fast-json-stringify) answers a string.
  const answer = { etag: statusEtag(set), body: Buffer.from(reply.serialize(statusDocument(set)) as string) };
  answers.set(set, answer);
  return answer;
}

const ConditionalStatusHeaders = Type.Object({
  'if-none-match': Type.Optional(Type.String({ description: 'The `ETag` of the status the client holds: 304 while it is still the current one.' })),
  prefer: Type.Optional(
    Type.String({ description: '`wait=N` (RFC 7240), with If-None-Match: answer as soon as the status changes, or 304 after N seconds (at most 60).' }),
  ),
});

/**
 * A conditional status read: the status when it differs from the client's
 * tag, else — after waiting for a change if asked to and there is room — 304.
 */
async function answerStatus(watch: StatusWatch, set: TestRunSetRecord, request: FastifyRequest, reply: FastifyReply) {
  let etag = statusEtag(set);
  const condition = request.headers['if-none-match'];
  if (condition !== undefined) {
    const seconds = preferredWait(request.headers.prefer);
    if (noneMatchHits(condition, etag)) {
      const changed = seconds > 0 && watch.hasRoom ? await waitForChange(watch, set.id, etag, seconds, reply) : undefined;
      if (!changed) return reply.header('etag', etag).code(304).send();
      set = changed;
      etag = statusEtag(set);
    } else if (seconds > 0) {
      // The status changed before the read came: a wait that ended at once. Saying
      // so keeps a waiting client asking at once instead of sleeping its interval.
      void reply.header('preference-applied', `wait=${seconds}`);
    }
  }
  void reply.header('etag', etag);
  return statusDocument(set);
}

function waitForChange(watch: StatusWatch, id: string, etag: string, seconds: number, reply: FastifyReply) {
  void reply.header('preference-applied', `wait=${seconds}`);
  const gone = new AbortController();
  reply.raw.once('close', () => gone.abort());
  return watch.wait(id, etag, seconds * 1000, gone.signal);
}

/**
 * The set, or the 404 problem every route that takes a set id answers — also
 * for a set of an environment the key may not see, so its existence is not told.
 */
export async function findSet(deps: AppDeps, id: string, key: ApiKeyRecord | null): Promise<TestRunSetRecord> {
  const set = await deps.store.sets.get(id.toLowerCase());
  if (!set || !seesSetEnv(key, set.env)) throw setNotFound(id);
  return set;
}


/** What the use cases of src/sets/create.ts need of a request: its key, the key's set budget (429 on this reply when spent), its log. */
export function setMaker(deps: AppDeps, request: FastifyRequest, reply: FastifyReply): SetMaker {
  const keyId = request.apiKey?.id ?? null;
  return { store: deps.store, suite: deps.suite(), secretKey: deps.secretKey, keyId, spend: () => deps.setLimit.take(keyId, reply), log: request.log };
}
