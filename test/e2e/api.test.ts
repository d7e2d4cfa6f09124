/**
 * The seed API over real HTTP against the real server (CLI child process, real
 * SQLite file): shapes, every rule of docs/interface.md, every bad input.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertNoLeakedServers, startRunset, waitForSet, type RunningServer } from '../helpers/server.js';
import { MIXED_CONFIG, SECRET_VALUE } from './fixtures.js';
import { ERRORS } from '../../src/core/errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe('Test Run Set API', () => {
  let server: RunningServer;
  before(async () => {
    server = await startRunset({ config: MIXED_CONFIG, env: { E2E_SECRET_TOKEN: SECRET_VALUE }, args: ['--workers', '2'] });
  });
  after(async () => {
    assert.equal(await server.stop(), 0, 'graceful stop exits 0');
    assert.ok(!server.logs().includes(server.apiKey), 'the key never appears in logs');
    assert.ok(!server.logs().includes(SECRET_VALUE), 'the secret never appears in logs');
  });

  test('create then poll to FAIL with exact seed shapes', async () => {
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' } });
    assert.equal(created.status, 200);
    assert.match(created.headers.get('content-type') ?? '', /application\/json/);
    assert.deepEqual(Object.keys(created.body), ['testRunSetId']);
    const id = created.body.testRunSetId as string;
    assert.match(id, UUID);

    const first = await api(server, 'GET', `/v0/test-run-sets/${id}`);
    assert.equal(first.status, 200);
    assert.deepEqual(Object.keys(first.body).sort(), ['createdAt', 'endedAt', 'id', 'progress', 'startedAt', 'status']);
    assert.match(first.body.createdAt as string, ISO);

    const done = await waitForSet(server, id);
    assert.equal(done.status, 'FAIL');
    assert.deepEqual(done.progress, { counts: { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 1 } });
    assert.match(done.startedAt as string, ISO);
    assert.match(done.endedAt as string, ISO);
    assert.ok((done.endedAt as string) >= (done.startedAt as string));
    assert.ok((done.startedAt as string) >= (done.createdAt as string));

    const members = await api<{ testRuns: Array<Record<string, unknown>> }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`);
    assert.equal(members.status, 200);
    const [pass, fail] = members.body.testRuns;
    assert.deepEqual(Object.keys(pass!).sort(), ['artifacts', 'attempts', 'cancelledBy', 'cases', 'durationMs', 'endedAt', 'error', 'expectedMs', 'flaky', 'heldBy', 'id', 'name', 'output', 'quarantined', 'restarts', 'skipped', 'startedAt', 'starts', 'status', 'type', 'workerId']);
    assert.equal(pass!.flaky, false);
    assert.equal(pass!.heldBy, null, 'an ended member is held by no worker');
    assert.deepEqual([pass!.starts, pass!.restarts, fail!.starts, fail!.restarts], [1, [], 1, []], 'each ran once: one start, no restart');
    assert.equal(pass!.skipped, false, 'a command never skips');
    assert.equal(fail!.skipped, false);
    assert.match(pass!.workerId as string, /\//, 'the worker that ran it: host/pid/…');
    assert.equal(pass!.expectedMs, 1000, 'no history yet: every member counts alike');
    assert.deepEqual(pass!.artifacts, [], 'a command member keeps no files');
    assert.equal(pass!.name, 'passes');
    assert.equal(pass!.status, 'SUCCESS');
    assert.equal(pass!.error, null);
    assert.equal(fail!.status, 'FAIL');
    assert.equal(fail!.error, 'exited with code 3');
    assert.equal(fail!.attempts, 1);
    assert.match(fail!.output as string, /token is \*\*\*/);
    assert.ok(!(fail!.output as string).includes(SECRET_VALUE), 'secret masked in output');
  });

  test('a set whose tests all pass ends SUCCESS', async () => {
    const config = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', envOverride: { SECRET_TOKEN: 'x' } } });
    assert.equal(config.status, 200);
    const done = await waitForSet(server, config.body.testRunSetId as string);
    assert.equal(done.status, 'FAIL', 'the failing member still fails with an overridden secret');
    const members = await api<{ testRuns: Array<{ output: string }> }>(server, 'GET', `/v0/test-run-sets/${config.body.testRunSetId as string}/test-runs`);
    assert.match(members.body.testRuns[1]!.output, /token is \*\*\*/, 'an overridden secret is masked too');
  });

  test('override of a plain variable reaches the test', async () => {
    const res = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', envOverride: { GREETING: 'bye' } } });
    const done = await waitForSet(server, res.body.testRunSetId as string);
    assert.deepEqual(done.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 2 });
  });

  test('40 concurrent creates all get distinct sets that all end', async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, () => api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' } })),
    );
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set([200]));
    const ids = results.map((r) => r.body.testRunSetId as string);
    assert.equal(new Set(ids).size, 40);
    for (const id of ids) {
      const done = await waitForSet(server, id, 60_000);
      const c = done.progress.counts;
      assert.equal(c.WAITING! + c.RUNNING! + c.SUCCESS! + c.FAIL!, 2);
      assert.equal(done.status, 'FAIL');
    }
  });

  const problemCases: Array<{ name: string; code: keyof typeof ERRORS; send: () => ReturnType<typeof api>; detail?: RegExp }> = [
    { name: 'missing key', code: 'unauthorized', send: () => api(server, 'GET', '/v0/test-run-sets/00000000-0000-4000-8000-000000000000', { auth: null }) },
    { name: 'malformed key', code: 'unauthorized', send: () => api(server, 'GET', '/v0/test-run-sets/00000000-0000-4000-8000-000000000000', { auth: 'Bearer nope' }) },
    { name: 'unknown key', code: 'unauthorized', send: () => api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' }, auth: `Bearer rs_${'A'.repeat(43)}` }) },
    { name: 'basic auth', code: 'unauthorized', send: () => api(server, 'GET', '/v0/test-run-sets/x', { auth: 'Basic dXNlcjpwYXNz' }) },
    { name: 'malformed JSON', code: 'invalid_json', send: () => api(server, 'POST', '/v0/test-run-sets', { rawBody: '{"env":', headers: { 'content-type': 'application/json' } }) },
    { name: 'empty body', code: 'invalid_json', send: () => api(server, 'POST', '/v0/test-run-sets', { rawBody: '', headers: { 'content-type': 'application/json' } }) },
    { name: 'env missing', code: 'invalid_body', send: () => api(server, 'POST', '/v0/test-run-sets', { body: {} }), detail: /env/ },
    { name: 'env wrong type', code: 'invalid_body', send: () => api(server, 'POST', '/v0/test-run-sets', { body: { env: 42 } }), detail: /env/ },
    { name: 'array body', code: 'invalid_body', send: () => api(server, 'POST', '/v0/test-run-sets', { body: ['staging'] }) },
    { name: 'override value not a string', code: 'invalid_body', send: () => api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', envOverride: { GREETING: 1 } } }), detail: /envOverride/ },
    { name: 'unknown field', code: 'unknown_field', send: () => api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', tags: ['x'] } }), detail: /"tags"/ },
    { name: 'unknown environment', code: 'unknown_environment', send: () => api(server, 'POST', '/v0/test-run-sets', { body: { env: 'prod' } }), detail: /known environments: staging, lonely/ },
    { name: 'undeclared override key', code: 'undeclared_variable', send: () => api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', envOverride: { GREETNG: 'x' } } }), detail: /GREETNG.*declared variables: GREETING, SECRET_TOKEN/ },
    { name: 'no tests for env', code: 'no_tests', send: () => api(server, 'POST', '/v0/test-run-sets', { body: { env: 'lonely' } }) },
    { name: 'malformed uuid', code: 'invalid_id', send: () => api(server, 'GET', '/v0/test-run-sets/not-a-uuid') },
    { name: 'unknown id', code: 'not_found', send: () => api(server, 'GET', '/v0/test-run-sets/00000000-0000-4000-8000-000000000000') },
    { name: 'unknown id members', code: 'not_found', send: () => api(server, 'GET', '/v0/test-run-sets/00000000-0000-4000-8000-000000000000/test-runs') },
    { name: 'unknown route', code: 'not_found', send: () => api(server, 'GET', '/v0/nothing-here') },
    { name: 'text body', code: 'unsupported_media_type', send: () => api(server, 'POST', '/v0/test-run-sets', { rawBody: 'env=staging', headers: { 'content-type': 'text/plain' } }), detail: /content type "text\/plain" is not accepted; send Content-Type: application\/json/ },
    { name: 'form body', code: 'unsupported_media_type', send: () => api(server, 'POST', '/v0/test-run-sets', { rawBody: 'env=staging', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), detail: /"application\/x-www-form-urlencoded" is not accepted/ },
    { name: 'body over 1 MiB', code: 'body_too_large', send: () => api(server, 'POST', '/v0/test-run-sets', { rawBody: JSON.stringify({ env: 'x'.repeat(1024 * 1024) }), headers: { 'content-type': 'application/json' } }) },
  ];

  for (const c of problemCases) {
    test(`problem: ${c.name} → ${ERRORS[c.code].status} ${c.code}`, async () => {
      const res = await c.send();
      assert.equal(res.status, ERRORS[c.code].status, res.text);
      assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
      const body = res.body as Record<string, unknown>;
      assert.equal(body.code, c.code);
      assert.equal(body.status, ERRORS[c.code].status);
      assert.equal(body.title, ERRORS[c.code].title);
      assert.equal(typeof body.type, 'string');
      assert.equal(typeof body.detail, 'string');
      if (c.detail) assert.match(body.detail as string, c.detail);
      assert.ok(!/\bat .+:\d+:\d+/.test(res.text), 'no stack trace');
      if (res.status === 401) assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
    });
  }

  test('Idempotency-Key: same key and body → same set; another body → 422', async () => {
    const headers = { 'idempotency-key': `deploy-${Date.now()}` };
    const a = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', envOverride: { GREETING: 'hello' } }, headers });
    const raw = JSON.stringify({ envOverride: { GREETING: 'hello' }, env: 'staging' });
    const b = await api(server, 'POST', '/v0/test-run-sets', { rawBody: raw, headers: { ...headers, 'content-type': 'application/json' } });
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.equal(b.body.testRunSetId, a.body.testRunSetId, 'key order does not matter');
    const c = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' }, headers });
    assert.equal(c.status, 422);
    assert.equal((c.body as { code: string }).code, 'idempotency_conflict');
    const long = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' }, headers: { 'idempotency-key': 'x'.repeat(256) } });
    assert.equal(long.status, 400);
    assert.equal((long.body as { code: string }).code, 'invalid_header');
    await waitForSet(server, a.body.testRunSetId as string);
  });

  test('health answers without a key for readiness probes', async () => {
    const res = await api(server, 'GET', '/health', { auth: null });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
  });

  test('OpenAPI 3.1 document describes the API without a key', async () => {
    interface Schema { properties: Record<string, unknown>; additionalProperties?: boolean; required?: string[] }
    interface Operation { requestBody?: { content: Record<string, { schema: Schema }> }; responses: Record<string, { content: Record<string, { schema: Schema }> }> }
    interface Doc {
      openapi: string;
      info: { version: string; license: { name: string } };
      servers: unknown;
      paths: Record<string, Record<string, Operation>>;
      components: { securitySchemes: Record<string, { scheme: string }>; schemas: Record<string, Schema> };
    }
    const res = await api<Doc>(server, 'GET', '/openapi.json', { auth: null });
    assert.equal(res.status, 200);
    const doc = res.body;
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '0.1.0');
    assert.equal(doc.info.license.name, 'MIT');
    assert.deepEqual(doc.servers, [{ url: '/api' }]);
    assert.ok(doc.paths['/v0/test-run-sets']?.post);
    assert.ok(doc.paths['/v0/test-run-sets/{id}']?.get);
    assert.ok(doc.paths['/v0/test-run-sets/{id}/test-runs']?.get);
    assert.equal(doc.components.securitySchemes.bearerAuth?.scheme, 'bearer');
    // Named schemas are components, referenced by the operations.
    const named = (schema: Schema & { $ref?: string }): Schema => (schema.$ref ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')]! : schema);
    const body = named(doc.paths['/v0/test-run-sets'].post.requestBody!.content['application/json']!.schema);
    assert.deepEqual(Object.keys(body.properties).sort(), ['concurrencyGroup', 'env', 'envOverride', 'labels', 'select', 'suite', 'timeoutSeconds'], "the seed's two fields and the labels, select, suite, timeoutSeconds and concurrencyGroup extensions");
    assert.deepEqual(body.required, ['env'], 'labels are optional: a seed body is still whole');
    assert.equal(body.additionalProperties, false);
    const status = named(doc.paths['/v0/test-run-sets/{id}'].get.responses['200']!.content['application/json']!.schema);
    assert.deepEqual(Object.keys(status.properties).sort(), ['createdAt', 'endedAt', 'id', 'progress', 'startedAt', 'status']);
    // The member view's starts and restarts (at-least-once made visible), beside the fields it had.
    const member = doc.components.schemas.TestRun!.properties as Record<string, { type?: string; description?: string; items?: { anyOf?: Array<{ const?: string; enum?: string[] }> } }>;
    assert.equal(member.starts?.type, 'integer');
    assert.match(member.starts?.description ?? '', /lease expired/);
    assert.deepEqual(member.restarts?.items?.anyOf?.flatMap((r) => r.enum ?? [r.const]), ['lease lost', 'worker lost'], JSON.stringify(member.restarts));
    assert.ok(doc.components.schemas.TestRun!.required?.includes('starts'));
  });
});

after(() => assertNoLeakedServers());
