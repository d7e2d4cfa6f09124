/**
 * The dashboard's API extensions over real HTTP: listing sets (filters, cursor
 * paging), set details with secret overrides masked, environments without
 * secret values, "run again" (and its conflicts after a key change), and their
 * OpenAPI description.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { DASHBOARD_CONFIG, DASHBOARD_SECRET, OVERRIDE_SECRET } from './dashboard-fixtures.js';

interface Summary { id: string; env: string; status: string; createdAt: string; progress: { counts: Record<string, number> } }
interface Page { testRunSets: Summary[]; nextCursor: string | null }

describe('dashboard API', () => {
  let server: RunningServer;
  const created: Array<{ id: string; env: string }> = [];

  before(async () => {
    server = await startRunset({ config: DASHBOARD_CONFIG, env: { DASH_TOKEN: DASHBOARD_SECRET }, args: ['--workers', '2'] });
    for (const env of ['staging', 'preview', 'staging', 'preview', 'staging']) {
      const body = env === 'staging' ? { env, envOverride: { TOKEN: OVERRIDE_SECRET, GREETING: 'howdy' } } : { env };
      const res = await api(server, 'POST', '/v0/test-run-sets', { body });
      assert.equal(res.status, 200, res.text);
      created.push({ id: res.body.testRunSetId as string, env });
      await new Promise((r) => setTimeout(r, 5)); // distinct createdAt, so the expected order is plain
    }
    for (const set of created) await waitForSet(server, set.id);
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
    for (const secret of [DASHBOARD_SECRET, OVERRIDE_SECRET, server.apiKey]) assert.ok(!server.logs().includes(secret), 'no secret in logs');
  });

  test('lists sets newest first with every status field and env', async () => {
    const res = await api<Page>(server, 'GET', '/v0/test-run-sets');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.testRunSets.map((s) => s.id), created.map((s) => s.id).reverse());
    assert.equal(res.body.nextCursor, null);
    const first = res.body.testRunSets[0]!;
    assert.deepEqual(Object.keys(first).sort(), ['createdAt', 'endedAt', 'env', 'id', 'progress', 'startedAt', 'status']);
    const status = await api(server, 'GET', `/v0/test-run-sets/${first.id}`);
    const { env: _env, ...seedFields } = first;
    assert.deepEqual(seedFields, status.body, 'list items carry the seed status shape (plus env)');
  });

  test('filters by environment and status, and pages with the cursor', async () => {
    const preview = await api<Page>(server, 'GET', '/v0/test-run-sets?env=preview');
    assert.deepEqual(preview.body.testRunSets.map((s) => s.id), created.filter((s) => s.env === 'preview').map((s) => s.id).reverse());
    const passed = await api<Page>(server, 'GET', '/v0/test-run-sets?status=SUCCESS');
    assert.equal(passed.body.testRunSets.length, 5, 'every set passes (the override is the expected secret)');
    assert.deepEqual((await api<Page>(server, 'GET', '/v0/test-run-sets?status=FAIL')).body.testRunSets, []);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: Page } = await api<Page>(server, 'GET', `/v0/test-run-sets?env=staging&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...page.body.testRunSets.map((s) => s.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    assert.deepEqual(seen, created.filter((s) => s.env === 'staging').map((s) => s.id).reverse());
  });

  for (const [query, detail] of [
    ['limit=0', /limit/],
    ['limit=101', /limit/],
    ['limit=ten', /limit/],
    ['status=DONE', /status/],
    ['cursor=not-a-cursor', /cursor/],
    ['colour=red', /additional|colour/],
  ] as const) {
    test(`a malformed query (${query}) is 400 invalid_query`, async () => {
      const res = await api(server, 'GET', `/v0/test-run-sets?${query}`);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.code, 'invalid_query');
      assert.match(res.body.detail as string, detail);
    });
  }

  test('a query error names the parameter and what is accepted', async () => {
    const unknown = await api(server, 'GET', '/v0/test-run-sets?colour=red');
    assert.equal(unknown.body.detail, 'unknown query parameter "colour"; accepted: env, status, limit, cursor, label');
    const status = await api(server, 'GET', '/v0/test-run-sets?status=DONE');
    assert.match(status.body.detail as string, /query parameter status .*; expected: One of WAITING, RUNNING, SUCCESS, FAIL\./);
  });

  test('the list needs a key', async () => {
    assert.equal((await api(server, 'GET', '/v0/test-run-sets', { auth: null })).status, 401);
    assert.equal((await api(server, 'GET', '/v0/environments', { auth: null })).status, 401);
  });

  test('details show the environment and the overrides, secret values masked', async () => {
    const res = await api(server, 'GET', `/v0/test-run-sets/${created[0]!.id}/details`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      id: created[0]!.id,
      env: 'staging',
      overrides: [
        { name: 'TOKEN', value: '***', secret: true },
        { name: 'GREETING', value: 'howdy', secret: false },
      ],
      maxFailures: null,
      cancellation: null,
      labels: {},
      suite: null,
      select: null,
      queue: null,
      phase: 'ended',
      held: [],
      failing: 0,
    });
    assert.ok(!res.text.includes(OVERRIDE_SECRET));
    const plain = await api(server, 'GET', `/v0/test-run-sets/${created[1]!.id}/details`);
    assert.deepEqual(plain.body.overrides, []);
    assert.equal((await api(server, 'GET', '/v0/test-run-sets/00000000-0000-4000-8000-000000000000/details')).status, 404);
    assert.equal((await api(server, 'GET', '/v0/test-run-sets/nope/details')).status, 400);
  });

  test('environments list declared variables and which are secret, never a secret value', async () => {
    const res = await api(server, 'GET', '/v0/environments');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      environments: [
        {
          name: 'staging',
          tests: 2,
          variables: [
            { name: 'GREETING', secret: false, value: 'hello', accepts: null },
            { name: 'TOKEN', secret: true, value: null, accepts: null },
          ],
        },
        { name: 'preview', tests: 1, variables: [{ name: 'GREETING', secret: false, value: 'hi', accepts: null }] },
      ],
    });
    assert.ok(!res.text.includes(DASHBOARD_SECRET));
  });

  test('run again creates a new set with the same environment and overrides, secret ones included', async () => {
    const res = await api(server, 'POST', `/v0/test-run-sets/${created[0]!.id}/rerun`);
    assert.equal(res.status, 200, res.text);
    const id = res.body.testRunSetId as string;
    assert.notEqual(id, created[0]!.id);
    const done = await waitForSet(server, id);
    assert.equal(done.status, 'SUCCESS', 'the sealed secret override reached the test again');
    const details = await api(server, 'GET', `/v0/test-run-sets/${id}/details`);
    assert.deepEqual(details.body.overrides, [
      { name: 'TOKEN', value: '***', secret: true },
      { name: 'GREETING', value: 'howdy', secret: false },
    ]);
    assert.equal((await api(server, 'POST', '/v0/test-run-sets/00000000-0000-4000-8000-000000000000/rerun')).status, 404);
  });

  test('the OpenAPI document describes the new operations and both credentials', async () => {
    const res = await api<{ paths: Record<string, Record<string, { security?: unknown[] }>>; components: { securitySchemes: Record<string, unknown> } }>(
      server, 'GET', '/openapi.json', { auth: null },
    );
    const paths = res.body.paths;
    assert.ok(paths['/v0/test-run-sets']?.get, 'list');
    assert.ok(paths['/v0/test-run-sets']?.post, 'create is still there');
    assert.ok(paths['/v0/test-run-sets/{id}/details']?.get);
    assert.ok(paths['/v0/test-run-sets/{id}/rerun']?.post);
    assert.ok(paths['/v0/environments']?.get);
    assert.ok(paths['/v0/session']?.post && paths['/v0/session'].delete && paths['/v0/session'].get);
    assert.deepEqual(paths['/v0/test-run-sets'].get.security, [{ bearerAuth: [] }, { sessionCookie: [] }]);
    assert.deepEqual(res.body.components.securitySchemes.sessionCookie, {
      type: 'apiKey',
      in: 'cookie',
      name: 'runset_session',
      description: 'The dashboard session from POST /v0/session; writes also need X-CSRF-Token.',
    });
    assert.equal(Object.keys(paths).some((p) => !p.startsWith('/v0/') && p !== '/health' && !p.startsWith('/health')), false, 'no page route in the API document');
  });
});

after(() => assertNoLeakedServers());

test('run again under another RUNSET_SECRET_KEY answers 409 rerun_conflict naming the secret, never its value', async () => {
  const dataDir = path.join(tempDir(), 'data');
  const start = (secretKey: string) =>
    startRunset({ config: DASHBOARD_CONFIG, dataDir, env: { DASH_TOKEN: DASHBOARD_SECRET, RUNSET_SECRET_KEY: secretKey }, args: ['--workers', '1'] });
  const first = await start('the first key');
  const res = await api(first, 'POST', '/v0/test-run-sets', { body: { env: 'staging', envOverride: { TOKEN: OVERRIDE_SECRET } } });
  assert.equal(res.status, 200, res.text);
  const id = res.body.testRunSetId as string;
  await waitForSet(first, id);
  assert.equal(await first.stop(), 0);

  const second = await start('another key');
  const rerun = await api(second, 'POST', `/v0/test-run-sets/${id}/rerun`);
  assert.equal(rerun.status, 409, rerun.text);
  assert.equal(rerun.body.code, 'rerun_conflict');
  assert.match(rerun.body.detail as string, /secret override of TOKEN .* sealed under another RUNSET_SECRET_KEY/);
  assert.ok(!rerun.text.includes(OVERRIDE_SECRET));
  assert.equal(await second.stop(), 0);
  assert.ok(!second.logs().includes(OVERRIDE_SECRET));
});
