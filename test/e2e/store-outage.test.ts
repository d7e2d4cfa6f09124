/**
 * A store outage (PostgreSQL restarting) answers 503 store_unavailable with
 * Retry-After, not a 500: the app over a real SQLite store whose reads are made
 * to fail the way the PostgreSQL store fails during a restart.
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
import { StoreUnavailableError } from '../../src/store/postgres/connection.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../helpers/server.js';

test('a transient store outage answers 503 store_unavailable with Retry-After', async () => {
  const real = new SqliteStore(path.join(tempDir(), 'runset.db'));
  await real.migrate();
  const { token } = await createKey(real, 'outage');
  let down = false;
  const sets = new Proxy(real.sets, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== 'get') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      return (id: string) => {
        if (down) return Promise.reject(new StoreUnavailableError('store unavailable: connection refused', { cause: new Error('ECONNREFUSED') }));
        return target.get(id);
      };
    },
  });
  const store = new Proxy(real, { get: (target, prop, receiver) => (prop === 'sets' ? sets : (Reflect.get(target, prop, receiver) as unknown)) }) as Store;
  const suite = parseSuiteConfig('environments:\n  local: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n', '/tmp/runset.config.yaml');
  const auth = new KeyAuthenticator(store);
  const app = await buildApp({ store, suite: () => suite, auth, secretKey: randomBytes(32), logger: pino({ level: 'silent' }), setLimit: new SetCreationLimit(100), workerStaleMs: 3000 });
  try {
    const url = '/api/v0/test-run-sets/00000000-0000-4000-8000-000000000000';
    const headers = { authorization: `Bearer ${token}` };
    assert.equal((await app.inject({ method: 'GET', url, headers })).statusCode, 404);
    down = true;
    const res = await app.inject({ method: 'GET', url, headers });
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers['retry-after'], '2');
    assert.match(String(res.headers['content-type']), /application\/problem\+json/);
    assert.equal(res.json<{ code: string }>().code, 'store_unavailable');
    const health = await app.inject({ method: 'GET', url: '/api/health' });
    assert.equal(health.statusCode, 503, 'readiness fails while the store is down');
  } finally {
    await app.close();
    await auth.close();
    await real.close();
  }
});
