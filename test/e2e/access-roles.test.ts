/**
 * Every operation × every role, over real HTTP: a role below what the operation
 * needs is refused 403 `forbidden` saying what the key may do; a role at or
 * above it is let through (whatever the operation then answers). The table is
 * written here, apart from the policy it checks, and every operation of the
 * served OpenAPI document must be in it: a new route without a rule fails.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KEY_ROLES, type KeyRole } from '../../src/core/types.js';
import { startAccessServer, type AccessServer } from './access-fixture.js';

interface Fixture {
  set: string;
}

interface Operation {
  method: string;
  path: (f: Fixture) => string;
  body?: unknown;
  /** The least role allowed; `public` needs no key (health, the dashboard's sign-in). */
  needs: KeyRole | 'public';
}

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

const OPERATIONS: Record<string, Operation> = {
  getTestRunSet: { method: 'GET', path: (f) => `/v0/test-run-sets/${f.set}`, needs: 'read' },
  listTestRuns: { method: 'GET', path: (f) => `/v0/test-run-sets/${f.set}/test-runs`, needs: 'read' },
  getTestRunSetDetails: { method: 'GET', path: (f) => `/v0/test-run-sets/${f.set}/details`, needs: 'read' },
  listTestRunSets: { method: 'GET', path: () => '/v0/test-run-sets', needs: 'read' },
  getArtifact: { method: 'GET', path: () => `/v0/artifacts/${UNKNOWN}`, needs: 'read' },
  listEnvironments: { method: 'GET', path: () => '/v0/environments', needs: 'read' },
  listWorkers: { method: 'GET', path: () => '/v0/workers', needs: 'read' },
  listWebhookDeliveries: { method: 'GET', path: () => '/v0/webhook-deliveries', needs: 'read' },
  listTests: { method: 'GET', path: () => '/v0/tests?env=staging', needs: 'read' },
  getTestHistory: { method: 'GET', path: () => '/v0/tests/history?env=staging&name=ok', needs: 'read' },
  createTestRunSet: { method: 'POST', path: () => '/v0/test-run-sets', body: { env: 'staging' }, needs: 'trigger' },
  rerunTestRunSet: { method: 'POST', path: (f) => `/v0/test-run-sets/${f.set}/rerun`, needs: 'trigger' },
  cancelTestRunSet: { method: 'POST', path: (f) => `/v0/test-run-sets/${f.set}/cancel`, needs: 'trigger' },
  listKeys: { method: 'GET', path: () => '/v0/keys', needs: 'admin' },
  createKey: { method: 'POST', path: () => '/v0/keys', body: { name: 'made by the role table', role: 'read' }, needs: 'admin' },
  revokeKey: { method: 'DELETE', path: () => `/v0/keys/${UNKNOWN}`, needs: 'admin' },
  createSession: { method: 'POST', path: () => '/v0/session', body: { key: `rs_${'A'.repeat(43)}` }, needs: 'public' },
  getSession: { method: 'GET', path: () => '/v0/session', needs: 'public' },
  deleteSession: { method: 'DELETE', path: () => '/v0/session', needs: 'public' },
  health: { method: 'GET', path: () => '/health', needs: 'public' },
};

const rank = (role: KeyRole) => KEY_ROLES.indexOf(role);

describe('role × operation', () => {
  let server: AccessServer;
  const tokens = new Map<KeyRole, string>();
  let fixture: Fixture;
  let served: Set<string>;
  let document: { paths: Record<string, Record<string, { operationId?: string }>> };

  before(async () => {
    server = await startAccessServer('sqlite');
    for (const role of KEY_ROLES) tokens.set(role, await server.key({ role }, `${role} key`));
    const created = await server.call<{ testRunSetId: string }>(tokens.get('admin')!, 'POST', '/v0/test-run-sets', { env: 'staging' });
    assert.equal(created.status, 200, created.text);
    fixture = { set: created.body.testRunSetId };
    const doc = await server.call<typeof document>(null, 'GET', '/openapi.json');
    assert.equal(doc.status, 200);
    document = doc.body;
    served = new Set(Object.values(document.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId ?? '')));
  });
  after(async () => {
    await server?.close();
  });

  test('every operation of the served OpenAPI document has a row in the table', () => {
    const operations = Object.entries(document.paths).flatMap(([p, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ at: `${method.toUpperCase()} ${p}`, id: op.operationId })),
    );
    assert.ok(operations.length >= 14, `the document lists ${operations.length} operations`);
    for (const op of operations) {
      assert.ok(op.id, `${op.at} has no operationId`);
      assert.ok(Object.hasOwn(OPERATIONS, op.id), `${op.at} (${op.id}) has no row in the role table of ${import.meta.url}`);
      assert.equal(OPERATIONS[op.id]!.method, op.at.split(' ')[0], `${op.id}: method`);
    }
    // A row for a route this build does not have yet (webhook deliveries) is allowed; every other row is served.
    for (const id of Object.keys(OPERATIONS)) if (id !== 'listWebhookDeliveries') assert.ok(served.has(id), `${id} is in the table but not served`);
  });

  for (const [operationId, op] of Object.entries(OPERATIONS)) {
    if (op.needs === 'public') continue;
    for (const role of KEY_ROLES) {
      const allowed = rank(role) >= rank(op.needs);
      test(`${operationId} with a ${role} key: ${allowed ? 'allowed' : '403 forbidden'}`, async (t) => {
        if (!served.has(operationId)) return t.skip(`${operationId} is not served by this build`);
        const res = await server.call<{ code?: string; detail?: string }>(tokens.get(role)!, op.method, op.path(fixture), op.body);
        if (allowed) {
          assert.ok(res.status !== 401 && res.status !== 403, `${res.status} ${res.text}`);
          assert.ok(res.status < 500, `${res.status} ${res.text}`);
        } else {
          assert.equal(res.status, 403, res.text);
          assert.match(String(res.headers.get('content-type')), /application\/problem\+json/);
          assert.equal(res.body.code, 'forbidden');
          assert.match(res.body.detail!, new RegExp(`needs role ${op.needs}.*has role ${role}: it may read`));
        }
      });
    }
  }

  test('no key at all is 401 on every operation that needs one', async () => {
    for (const [operationId, op] of Object.entries(OPERATIONS)) {
      if (op.needs === 'public' || !served.has(operationId)) continue;
      const res = await server.call(null, op.method, op.path(fixture), op.body);
      assert.equal(res.status, 401, `${operationId}: ${res.text}`);
    }
  });

  test('HEAD of a GET needs what the GET needs', async () => {
    assert.equal((await server.call(tokens.get('read')!, 'HEAD', '/v0/keys')).status, 403);
    assert.equal((await server.call(tokens.get('admin')!, 'HEAD', '/v0/keys')).status, 200);
  });

  test('a refused write changes nothing', async () => {
    const target = await server.call<{ testRunSetId: string }>(tokens.get('trigger')!, 'POST', '/v0/test-run-sets', { env: 'staging' });
    const refused = await server.call(tokens.get('read')!, 'POST', `/v0/test-run-sets/${target.body.testRunSetId}/cancel`);
    assert.equal(refused.status, 403);
    assert.equal((await server.store.sets.control(target.body.testRunSetId))?.cancellation, null);
    const before = (await server.store.keys.list()).length;
    assert.equal((await server.call(tokens.get('trigger')!, 'POST', '/v0/keys', { name: 'escalate', role: 'admin' })).status, 403);
    assert.equal((await server.store.keys.list()).length, before);
  });
});
