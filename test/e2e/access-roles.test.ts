/**
 * Every operation × every role, over real HTTP: a role below what the operation
 * needs is refused 403 `forbidden` saying what the key may do; a role at or
 * above it is let through (whatever the operation then answers). The table is
 * written here, apart from the policy it checks, and every operation of the
 * served OpenAPI document must be in it: a new route without a rule fails.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KEY_ROLES, type KeyRole } from '../../src/core/keys.js';
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
  /** A streamed answer (the worker notices): judged by its status alone. */
  stream?: boolean;
}

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const LEASE = { runId: UNKNOWN, workerId: 'role-table', claim: 1, token: 'not-a-ticket' };
const OUTCOME = { status: 'FAIL', attempts: 1, error: 'x', output: '', durationMs: 1 };
const RUN = { setId: UNKNOWN, env: 'staging', name: 'ok' };

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
  listSuites: { method: 'GET', path: () => '/v0/suites', needs: 'read' },
  getSuite: { method: 'GET', path: () => `/v0/suites/${'0'.repeat(64)}`, needs: 'read' },
  uploadSuite: { method: 'PUT', path: () => `/v0/suites/${'0'.repeat(64)}`, body: {}, needs: 'trigger' },
  nameSuite: { method: 'POST', path: () => '/v0/suite-names', body: { name: 'role-table', id: '0'.repeat(64) }, needs: 'trigger' },
  listQuarantine: { method: 'GET', path: () => '/v0/quarantine', needs: 'read' },
  addQuarantine: { method: 'POST', path: () => '/v0/quarantine', body: { env: 'staging', name: 'ok', reason: 'role table' }, needs: 'trigger' },
  removeQuarantine: { method: 'DELETE', path: () => '/v0/quarantine?env=staging&name=ok', needs: 'trigger' },
  listKeys: { method: 'GET', path: () => '/v0/keys', needs: 'admin' },
  createKey: { method: 'POST', path: () => '/v0/keys', body: { name: 'made by the role table', role: 'read' }, needs: 'admin' },
  revokeKey: { method: 'DELETE', path: () => `/v0/keys/${UNKNOWN}`, needs: 'admin' },
  createSession: { method: 'POST', path: () => '/v0/session', body: { key: `rs_${'A'.repeat(43)}` }, needs: 'public' },
  getSession: { method: 'GET', path: () => '/v0/session', needs: 'public' },
  deleteSession: { method: 'DELETE', path: () => '/v0/session', needs: 'public' },
  health: { method: 'GET', path: () => '/health', needs: 'public' },
  // The worker protocol: worker keys and admin ones, no other.
  getWorkerSettings: { method: 'GET', path: () => '/v0/worker/settings', needs: 'worker' },
  registerWorker: { method: 'POST', path: () => '/v0/worker/workers', body: { id: 'role-table', host: 'h', pid: 1, slots: 1 }, needs: 'worker' },
  heartbeatWorker: { method: 'POST', path: () => '/v0/worker/workers/heartbeat', body: { id: 'role-table' }, needs: 'worker' },
  removeWorker: { method: 'POST', path: () => '/v0/worker/workers/remove', body: { id: 'role-table' }, needs: 'worker' },
  listBatchWorkers: { method: 'POST', path: () => '/v0/worker/batch-workers', body: { setId: UNKNOWN, batchKey: 'b' }, needs: 'worker' },
  listWaitingWork: { method: 'POST', path: () => '/v0/worker/waiting-work', body: { setId: UNKNOWN, batchKey: 'b' }, needs: 'worker' },
  claimRuns: { method: 'POST', path: () => '/v0/worker/claims', body: { workerId: 'role-table', limit: 0, leaseMs: 1000 }, needs: 'worker' },
  claimBatch: { method: 'POST', path: () => '/v0/worker/batch-claims', body: { workerId: 'role-table', limit: 1, leaseMs: 1000, setId: UNKNOWN, batchKey: 'b' }, needs: 'worker' },
  startRun: { method: 'POST', path: () => '/v0/worker/leases/start', body: { lease: LEASE }, needs: 'worker' },
  heartbeatRun: { method: 'POST', path: () => '/v0/worker/leases/heartbeat', body: { lease: LEASE, leaseMs: 1000, attempts: 1 }, needs: 'worker' },
  finishRun: { method: 'POST', path: () => '/v0/worker/leases/finish', body: { lease: LEASE, outcome: OUTCOME, run: RUN }, needs: 'worker' },
  finishAndClaim: {
    method: 'POST', path: () => '/v0/worker/leases/finish-and-claim',
    body: { lease: LEASE, outcome: OUTCOME, run: RUN, next: { workerId: 'role-table', limit: 0, leaseMs: 1000 } }, needs: 'worker',
  },
  releaseRuns: { method: 'POST', path: () => '/v0/worker/leases/release', body: { leases: [] }, needs: 'worker' },
  workerNotices: { method: 'GET', path: () => '/v0/worker/notices', needs: 'worker', stream: true },
  uploadArtifact: { method: 'PUT', path: () => `/v0/worker/artifacts/${UNKNOWN}`, body: {}, needs: 'worker' },
  removeArtifacts: { method: 'POST', path: () => '/v0/worker/artifacts/remove', body: { locations: [] }, needs: 'worker' },
  getSuiteArchive: { method: 'GET', path: () => `/v0/worker/suites/${'0'.repeat(64)}`, needs: 'worker' },
};

const rank = (role: KeyRole) => ['read', 'trigger', 'admin'].indexOf(role);
/** Written apart from the policy it checks: read < trigger < admin; worker keys the worker protocol alone, which admin keys may use too. */
const allowedTo = (role: KeyRole, needs: KeyRole) =>
  needs === 'worker' ? role === 'worker' || role === 'admin' : role !== 'worker' && rank(role) >= rank(needs);

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
      const allowed = allowedTo(role, op.needs);
      test(`${operationId} with a ${role} key: ${allowed ? 'allowed' : '403 forbidden'}`, async (t) => {
        if (!served.has(operationId)) return t.skip(`${operationId} is not served by this build`);
        const res = op.stream ? await streamStatus(server, tokens.get(role)!, op.path(fixture)) : await server.call<{ code?: string; detail?: string }>(tokens.get(role)!, op.method, op.path(fixture), op.body);
        if (allowed) {
          assert.ok(res.status !== 401 && res.status !== 403, `${res.status} ${res.text}`);
          assert.ok(res.status < 500, `${res.status} ${res.text}`);
        } else {
          assert.equal(res.status, 403, res.text);
          assert.match(String(res.headers.get('content-type')), /application\/problem\+json/);
          assert.equal(res.body.code, 'forbidden');
          assert.match(res.body.detail!, new RegExp(`needs role ${op.needs}.*has role ${role}: it may (read|use the worker protocol only)`));
        }
      });
    }
  }

  test('no key at all is 401 on every operation that needs one', async () => {
    for (const [operationId, op] of Object.entries(OPERATIONS)) {
      if (op.needs === 'public' || !served.has(operationId)) continue;
      const res = op.stream ? await streamStatus(server, null, op.path(fixture)) : await server.call(null, op.method, op.path(fixture), op.body);
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

/** The status and headers of a streamed GET, the stream then dropped (it would last as long as the connection). */
async function streamStatus(server: AccessServer, token: string | null, route: string) {
  const abort = new AbortController();
  const res = await fetch(server.url + route, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: abort.signal });
  const streamed = res.headers.get('content-type')?.startsWith('application/x-ndjson');
  const text = streamed ? '' : await res.text();
  abort.abort();
  const body = (text ? JSON.parse(text) : {}) as { code?: string; detail?: string };
  return { status: res.status, headers: res.headers, body, text };
}
