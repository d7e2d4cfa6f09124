/**
 * Test history over real HTTP on every store: GET /api/v0/tests and
 * /api/v0/tests/history answer the documented shapes, page with cursors, keep a
 * key limited to environments to its own (404 for any other, exactly as for one
 * that does not exist), and refuse bad parameters with a problem that says what
 * is accepted.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { leaseOf } from '../../src/store/store.js';
import { startAccessServer, storeKinds, type AccessServer } from './access-fixture.js';

type Problem = { code: string; status: number; detail: string };
interface Outcome { setId: string; testRunId: string; result: string; flaky: boolean; restarted: boolean; cancelled: boolean; endedAt: string }
interface TestsBody { environment: string; tests: Array<Record<string, unknown> & { name: string; lastOutcomes: Outcome[] }>; nextCursor: string | null }
interface HistoryBody { environment: string; name: string; runs: Array<Record<string, unknown> & { setId: string }>; nextCursor: string | null }

for (const kind of storeKinds()) {
  describe(`test history API (${kind})`, () => {
    let server: AccessServer;
    let admin: string;
    let stagingOnly: string;
    const sets: string[] = [];

    /** A set created over the API with these labels, its one member ('ok') ended as given. */
    async function ranOnce(env: string, labels: Record<string, string>, outcome: { status: 'SUCCESS' | 'FAIL'; attempts: number; error: string | null }) {
      const created = await server.call<{ testRunSetId: string }>(admin, 'POST', '/v0/test-run-sets', { env, labels });
      assert.equal(created.status, 200, created.text);
      const [run] = await server.store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 60_000 });
      assert.ok(await server.store.claims.finishRun(leaseOf(run!), { ...outcome, output: '', durationMs: 120 }));
      sets.push(created.body.testRunSetId);
      await sleep(2);
    }

    before(async () => {
      server = await startAccessServer(kind);
      admin = await server.key({ role: 'admin' });
      stagingOnly = await server.key({ role: 'read', envs: ['staging'] });
      await ranOnce('staging', { commit: 'c1', branch: 'main' }, { status: 'FAIL', attempts: 1, error: 'expected 200, got 500\n  at check' });
      await ranOnce('staging', { commit: 'c1' }, { status: 'SUCCESS', attempts: 1, error: null });
      await ranOnce('staging', {}, { status: 'SUCCESS', attempts: 2, error: null });
      await ranOnce('preview', {}, { status: 'SUCCESS', attempts: 1, error: null });
    });
    after(async () => {
      await server?.close();
    });

    test('GET /tests: each test with its last outcomes, rates, durations and last failure', async () => {
      const res = await server.call<TestsBody>(stagingOnly, 'GET', '/v0/tests?env=staging');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.environment, 'staging');
      assert.equal(res.body.nextCursor, null);
      const [ok] = res.body.tests;
      assert.deepEqual(Object.keys(ok!).sort(), ['durationMs', 'flakyRate', 'lastFailure', 'lastOutcomes', 'name', 'passRate', 'restartRate', 'runs', 'type']);
      assert.deepEqual(ok!.lastOutcomes.map((o) => [o.setId, o.result, o.flaky, o.cancelled, o.restarted]), [
        [sets[2], 'SUCCESS', true, false, false],
        [sets[1], 'SUCCESS', true, false, false],
        [sets[0], 'FAIL', true, false, false],
      ]);
      assert.deepEqual({ ...ok, lastOutcomes: undefined, lastFailure: undefined }, {
        name: 'ok', type: 'command', lastOutcomes: undefined, runs: 3, passRate: 0.6667, flakyRate: 1, restartRate: 0, durationMs: { median: 120, p95: 120 }, lastFailure: undefined,
      });
      assert.deepEqual(ok!.lastFailure, { setId: sets[0], testRunId: ok!.lastOutcomes[2]!.testRunId, endedAt: ok!.lastOutcomes[2]!.endedAt, error: 'expected 200, got 500' });
      const filtered = await server.call<TestsBody>(admin, 'GET', '/v0/tests?env=staging&name=O&limit=1');
      assert.deepEqual(filtered.body.tests.map((t) => t.name), ['ok']);
      assert.deepEqual((await server.call<TestsBody>(admin, 'GET', '/v0/tests?env=staging&name=nope')).body.tests, []);
    });

    test('GET /tests/history: every ended run newest first with its labels, paged by the cursor', async () => {
      const seen: HistoryBody['runs'] = [];
      let cursor: string | null = null;
      do {
        const res: Awaited<ReturnType<typeof server.call<HistoryBody>>> = await server.call<HistoryBody>(
          stagingOnly, 'GET', `/v0/tests/history?env=staging&name=ok&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.name, 'ok');
        seen.push(...res.body.runs);
        cursor = res.body.nextCursor;
      } while (cursor !== null);
      assert.deepEqual(seen.map((r) => r.setId), [sets[2], sets[1], sets[0]]);
      const oldest = seen[2]!;
      assert.deepEqual(Object.keys(oldest).sort(), ['attempts', 'cancelled', 'durationMs', 'endedAt', 'error', 'labels', 'result', 'setId', 'startedAt', 'starts', 'testRunId']);
      assert.deepEqual([oldest.labels, oldest.result, oldest.attempts, oldest.durationMs, oldest.error], [{ commit: 'c1', branch: 'main' }, 'FAIL', 1, 120, 'expected 200, got 500']);
      assert.equal(seen[0]!.attempts, 2);
      assert.deepEqual(seen.map((r) => r.starts), [1, 1, 1], 'each ran in one start');
      const preview = await server.call<HistoryBody>(admin, 'GET', '/v0/tests/history?env=preview&name=ok');
      assert.deepEqual(preview.body.runs.map((r) => r.setId), [sets[3]]);
    });

    test('a key limited to environments gets 404 for any other, as for one that does not exist', async () => {
      for (const route of ['/v0/tests?env=', '/v0/tests/history?name=ok&env=']) {
        const hidden = await server.call<Problem>(stagingOnly, 'GET', `${route}preview`);
        const absent = await server.call<Problem>(stagingOnly, 'GET', `${route}nowhere`);
        assert.equal(hidden.status, 404, hidden.text);
        assert.match(String(hidden.headers.get('content-type')), /application\/problem\+json/);
        assert.equal(hidden.body.code, 'not_found');
        assert.deepEqual({ ...hidden.body, detail: hidden.body.detail.replace('preview', 'ENV') }, { ...absent.body, detail: absent.body.detail.replace('nowhere', 'ENV') });
      }
    });

    test('bad parameters: 400 problem+json saying what was wrong and what is accepted', async () => {
      const cases: Array<[string, string, RegExp]> = [
        ['/v0/tests', 'invalid_query', /env/],
        ['/v0/tests?env=staging&limit=0', 'invalid_query', /limit must be 1-100 \(default 20\)/],
        ['/v0/tests?env=staging&limit=abc', 'invalid_query', /limit.*1-100/],
        ['/v0/tests?env=staging&sort=name', 'invalid_query', /unknown query parameter "sort"; accepted: env, name, limit, cursor/],
        ['/v0/tests?env=staging&cursor=bm9wZQ', 'invalid_query', /cursor is not a cursor this server gave out/],
        ['/v0/tests?env=nowhere', 'unknown_environment', /"nowhere" is not a configured environment; known environments: staging, preview/],
        ['/v0/tests/history?env=staging', 'invalid_query', /name/],
        ['/v0/tests/history?env=staging&name=ok&limit=101', 'invalid_query', /limit must be 1-100 \(default 50\)/],
        ['/v0/tests/history?env=staging&name=ok&cursor=WyJ4Il0', 'invalid_query', /cursor is not a cursor this server gave out/],
      ];
      for (const [route, code, detail] of cases) {
        const res = await server.call<Problem>(admin, 'GET', route);
        assert.equal(res.status, 400, `${route}: ${res.text}`);
        assert.match(String(res.headers.get('content-type')), /application\/problem\+json/);
        assert.equal(res.body.code, code, route);
        assert.match(res.body.detail, detail, route);
      }
    });

    test('both operations are in the OpenAPI document with named schemas', async () => {
      const doc = await server.call<{ paths: Record<string, { get?: { operationId?: string; tags?: string[] } }>; components: { schemas: Record<string, unknown> } }>(null, 'GET', '/openapi.json');
      assert.equal(doc.body.paths['/v0/tests']?.get?.operationId, 'listTests');
      assert.equal(doc.body.paths['/v0/tests/history']?.get?.operationId, 'getTestHistory');
      for (const name of ['TestList', 'TestSummary', 'TestOutcome', 'TestHistory', 'TestHistoryRun']) assert.ok(doc.body.components.schemas[name], name);
    });
  });
}
