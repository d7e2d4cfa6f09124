/**
 * Response serializers are built on a route's first answer, request validators on its
 * first request (src/api/lazy-compilers.ts): every one of them still compiles (built
 * eagerly here, as Fastify's default does at start), a lazily built serializer writes
 * the same bytes as an eager one, and a lazy validator refuses what an eager one does,
 * in the same words.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { SetCreationLimit } from '../../src/api/rate-limit.js';
import { createKey, KeyAuthenticator } from '../../src/auth/keys.js';
import { parseSuiteConfig } from '../../src/config/suite.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../helpers/server.js';

const CONFIG = 'environments:\n  local: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n';

async function app(store: SqliteStore, eagerCompilers: boolean) {
  const suite = parseSuiteConfig(CONFIG, '/tmp/runset.config.yaml');
  const deps = { store, suite: () => suite, auth: new KeyAuthenticator(store), secretKey: randomBytes(32), logger: pino({ level: 'silent' }), setLimit: new SetCreationLimit(100), workerStaleMs: 3000 };
  return buildApp(deps, { eagerCompilers });
}

test('every route\'s serializers and validators compile; lazy ones answer what eager ones answer', async () => {
  const store = new SqliteStore(path.join(tempDir(), 'runset.db'));
  await store.migrate();
  const { token } = await createKey(store, 'serializers');
  const eager = await app(store, true);
  const lazy = await app(store, false);
  try {
    await eager.ready(); // compiles every serializer and validator of every route, as Fastify does by default: a schema it cannot compile throws here
    await lazy.ready();
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await lazy.inject({ method: 'POST', url: '/api/v0/test-run-sets', headers, payload: { env: 'local' } });
    assert.equal(created.statusCode, 200, created.body);
    const id = created.json<{ testRunSetId: string }>().testRunSetId;
    for (const url of [`/api/v0/test-run-sets/${id}`, `/api/v0/test-run-sets/${id}/test-runs`, '/api/v0/environments', '/api/v0/keys', '/api/v0/test-run-sets/not-an-id']) {
      const [a, b] = await Promise.all([eager.inject({ method: 'GET', url, headers }), lazy.inject({ method: 'GET', url, headers })]);
      assert.equal(b.statusCode, a.statusCode, url);
      assert.equal(b.body, a.body, `${url}: the same bytes`);
    }
    // The status GET's headers schema (If-None-Match, Prefer: optional strings) no request can
    // fail, so the lazy app runs no validator for it; what it answers is still the eager app's.
    const status = `/api/v0/test-run-sets/${id}`;
    for (const extra of [{ 'if-none-match': 'W/"x", "y"', prefer: 'wait=0, respond-async' }, { 'if-none-match': '*' }, { prefer: 'wait' }]) {
      const opts = { method: 'GET' as const, url: status, headers: { ...headers, ...extra } };
      const [a, b] = await Promise.all([eager.inject(opts), lazy.inject(opts)]);
      assert.equal(b.statusCode, a.statusCode, JSON.stringify(extra));
      assert.equal(b.body, a.body, `${JSON.stringify(extra)}: the same answer`);
    }
    // Refused by a validator (body, params, headers), twice: the first request compiles it, the second reuses it.
    const refused: Array<{ method: 'POST' | 'GET'; url: string; payload?: unknown; headers?: Record<string, string> }> = [
      { method: 'POST', url: '/api/v0/test-run-sets', payload: { env: 'local', unknown: 1 } },
      { method: 'POST', url: '/api/v0/test-run-sets', payload: { env: 7 } },
      { method: 'POST', url: '/api/v0/test-run-sets', payload: { env: 'local' }, headers: { 'idempotency-key': '' } },
      { method: 'GET', url: `/api/v0/test-run-sets/${id}/test-runs/not-a-run` },
    ];
    for (const r of [...refused, ...refused]) {
      const opts = { method: r.method, url: r.url, headers: { ...headers, ...r.headers }, ...(r.payload ? { payload: r.payload } : {}) };
      const [a, b] = await Promise.all([eager.inject(opts), lazy.inject(opts)]);
      assert.ok(a.statusCode >= 400 && a.statusCode < 500, `${r.method} ${r.url}: ${a.statusCode} ${a.body}`);
      assert.equal(b.statusCode, a.statusCode, `${r.method} ${r.url}`);
      assert.equal(b.body, a.body, `${r.method} ${r.url}: the same problem`);
    }
  } finally {
    await Promise.all([eager.close(), lazy.close()]);
    await store.close();
  }
});
