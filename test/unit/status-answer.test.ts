/**
 * The status GET's hot path (issue 40 item 3): a set row the embedded store
 * peeks is answered from its serialised answer, kept by the row object
 * (src/api/routes/test-run-sets.ts); and keys are looked up by their digest
 * alone, cached for half a second (src/auth/keys.ts). These prove the answer
 * is the serializer's very bytes and never outlives the row, and that a
 * revoked key still stops within a second. What the paths cost is measured in
 * bench/ (bench:status, bench:budgets), never asserted here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { SetCreationLimit } from '../../src/api/rate-limit.js';
import { CACHE_MISS, createKey, KeyAuthenticator, newToken } from '../../src/auth/keys.js';
import { parseSuiteConfig } from '../../src/config/suite.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../helpers/server.js';

const CONFIG = 'environments:\n  local: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n';

async function served() {
  // As `serve` opens it: the owner's store, which keeps (and peeks) the set rows it serves.
  const store = new SqliteStore(path.join(tempDir(), 'runset.db'), { owner: true });
  await store.migrate();
  const { token } = await createKey(store, 'status');
  const suite = parseSuiteConfig(CONFIG, '/tmp/runset.config.yaml');
  const auth = new KeyAuthenticator(store);
  const app = await buildApp({ store, suite: () => suite, auth, secretKey: randomBytes(32), logger: pino({ level: 'silent' }), setLimit: new SetCreationLimit(100), workerStaleMs: 3000 });
  const headers = { authorization: `Bearer ${token}` };
  const close = async () => {
    await app.close();
    await auth.close();
    await store.close();
  };
  return { store, app, headers, close };
}

test('a peeked set is answered with the serializer\'s bytes and ETag, and a changed set with its new status', async () => {
  const { store, app, headers, close } = await served();
  try {
    const created = await app.inject({ method: 'POST', url: '/api/v0/test-run-sets', headers, payload: { env: 'local' } });
    const id = created.json<{ testRunSetId: string }>().testRunSetId;
    const url = `/api/v0/test-run-sets/${id}`;
    // If-None-Match naming no tag takes the awaited path, which serialises afresh (and reads the row into the store's copy).
    const fresh = await app.inject({ method: 'GET', url, headers: { ...headers, 'if-none-match': '"other"' } });
    assert.ok(store.sets.peek?.(id), 'the row is peeked: the kept answer is what is being tested');
    for (let i = 0; i < 2; i++) {
      const kept = await app.inject({ method: 'GET', url, headers });
      assert.equal(kept.statusCode, 200);
      assert.equal(kept.body, fresh.body, 'the same bytes as the serializer writes');
      assert.equal(kept.headers.etag, fresh.headers.etag);
      assert.equal(kept.headers['content-type'], fresh.headers['content-type']);
    }
    assert.equal(fresh.json<{ status: string }>().status, 'WAITING');

    const cancelled = await app.inject({ method: 'POST', url: `${url}/cancel`, headers });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    const after = await app.inject({ method: 'GET', url, headers });
    assert.equal(after.json<{ status: string }>().status, 'FAIL', 'the answer went with the row it was made from');
    assert.notEqual(after.headers.etag, fresh.headers.etag);
    const head = await app.inject({ method: 'HEAD', url, headers });
    assert.equal(head.body, '');
    assert.equal(head.headers.etag, after.headers.etag);
  } finally {
    await close();
  }
});

test('keys are found by their digest only; a revoked key stops within a second', async () => {
  const { store, close } = await served();
  const auth = new KeyAuthenticator(store, 500);
  try {
    const { token, key } = await createKey(store, 'revoked soon');
    const header = `Bearer ${token}`;
    assert.equal((await auth.authenticate(header))?.id, key.id);
    assert.equal((auth.fromCache(header) as { id: string } | undefined)?.id, key.id, 'cached: answered without the store');
    // A token one character off is another digest: never the cached key.
    const near = `Bearer ${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    assert.equal(auth.fromCache(near), CACHE_MISS);
    assert.equal(await auth.authenticate(near), undefined);
    assert.equal(await auth.authenticate(`Bearer ${newToken()}`), undefined);

    assert.equal(await store.keys.revoke(key.id), true);
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal(auth.fromCache(header), CACHE_MISS, 'the cached answer is gone after its half second');
    assert.equal(await auth.authenticate(header), undefined, 'the revoked key is refused');
    assert.equal(auth.fromCache(header), undefined, 'and its refusal is what is cached');
  } finally {
    await auth.close();
    await close();
  }
});
