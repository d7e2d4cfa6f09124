/**
 * Store contract for key scopes: role, environments and expiry are stored and
 * read back the same by every path (create, list, lookup by hash, a session's
 * key); a key made without them is admin for every environment with no
 * expiry (what keys made before scopes become); set listings filter by a key's
 * environments; a first key is made only on a store without any. Run by
 * runStoreContract for every backend.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { NewTestRunSet } from '../../src/core/types.js';
import type { Store } from '../../src/store/store.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

export function runKeysContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: key scopes`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    test('role, environments and expiry round-trip through create, list, lookup and sessions', async () => {
      const expiresAt = '2031-02-03T04:05:06.789Z';
      const hash = randomUUID().replace(/-/g, '');
      const created = await store.keys.create({ id: randomUUID(), name: 'scoped', hash, role: 'read', envs: ['staging', 'preview'], expiresAt });
      const scope = { role: 'read', envs: ['staging', 'preview'], expiresAt };
      assert.deepEqual({ role: created.role, envs: created.envs, expiresAt: created.expiresAt }, scope);
      const found = await store.keys.findActiveByHash(hash);
      assert.deepEqual(found, created);
      assert.deepEqual((await store.keys.list()).find((k) => k.id === created.id), created);
      await store.keys.createSession({ idHash: `s-${hash}`, keyId: created.id, csrfToken: 'csrf', ttlMs: 60_000 });
      assert.deepEqual((await store.keys.findSession(`s-${hash}`))?.key, created);
    });

    test('a key made without a scope is admin, for every environment, never expiring', async () => {
      const hash = randomUUID().replace(/-/g, '');
      const key = await store.keys.create({ id: randomUUID(), name: 'legacy', hash });
      assert.equal(key.role, 'admin');
      assert.equal(key.envs, null);
      assert.equal(key.expiresAt, null);
      assert.deepEqual(await store.keys.findActiveByHash(hash), key);
    });

    test('a first key is made only on a store that has no key, once of many calls at once; a revoked key still counts', async () => {
      const newKey = (name: string) => ({ id: randomUUID(), name, hash: randomUUID().replace(/-/g, '') });
      const calls = Array.from({ length: 10 }, (_, i) => `first ${i}`);
      // Connections opened beforehand, so that the calls really overlap (PostgreSQL's pool opens them lazily).
      await Promise.all(calls.map(() => store.keys.list()));
      const made = (await Promise.all(calls.map((name) => store.keys.createFirst(newKey(name))))).filter((k) => k !== undefined);
      assert.equal(made.length, 1, 'one of the calls made it');
      const [key] = made;
      assert.ok(key);
      assert.deepEqual(await store.keys.list(), [key]);
      assert.deepEqual({ role: key.role, envs: key.envs, expiresAt: key.expiresAt }, { role: 'admin', envs: null, expiresAt: null });
      await store.keys.revoke(key.id);
      assert.equal(await store.keys.createFirst(newKey('after revoking')), undefined, 'a store whose keys were all revoked gets none');
      assert.equal((await store.keys.list()).length, 1);
    });

    test('set listings keep only the environments asked for, with the other filters and paging', async () => {
      for (const env of ['staging', 'preview', 'production', 'staging']) await store.sets.create(newSet(1, env));
      const envsOf = async (envs: string[], limit = 10) => (await store.setViews.list({ envs, limit })).sets.map((s) => s.env).sort();
      assert.deepEqual(await envsOf(['staging', 'preview']), ['preview', 'staging', 'staging']);
      assert.deepEqual(await envsOf(['nowhere']), []);
      const first = await store.setViews.list({ envs: ['staging', 'production'], limit: 2 });
      assert.equal(first.sets.length, 2);
      const rest = await store.setViews.list({ envs: ['staging', 'production'], limit: 2, cursor: first.nextCursor! });
      assert.deepEqual([...first.sets, ...rest.sets].map((s) => s.env).sort(), ['production', 'staging', 'staging']);
      assert.deepEqual((await store.setViews.list({ envs: ['staging', 'preview'], env: 'preview', limit: 10 })).sets.map((s) => s.env), ['preview']);
    });
  });
}
