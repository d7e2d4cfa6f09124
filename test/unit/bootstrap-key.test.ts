/** RUNSET_BOOTSTRAP_KEY (ensureKey): made once, found again, and a revoked one refused with the reason rather than a database error. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ensureKey, newToken } from '../../src/auth/keys.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';

test('ensureKey makes the key once, finds it after, and refuses a revoked one by name', async () => {
  const store = new SqliteStore(':memory:');
  await store.migrate();
  try {
    const token = newToken();
    const first = await ensureKey(store, token, 'bootstrap');
    const again = await Promise.all([ensureKey(store, token, 'bootstrap'), ensureKey(store, token, 'bootstrap')]);
    assert.deepEqual(again.map((k) => k.id), [first.id, first.id]);
    assert.equal((await store.keys.list()).length, 1);
    await store.keys.revoke(first.id);
    await assert.rejects(ensureKey(store, token, 'bootstrap'), /RUNSET_BOOTSTRAP_KEY names a key that was revoked/);
  } finally {
    await store.close();
  }
});
