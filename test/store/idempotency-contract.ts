/** Store contract for Idempotency-Key on create; run by runStoreContract for every backend. */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Store } from '../../src/store/store.js';
import type { NewTestRunSet } from '../../src/core/types.js';

export function runIdempotencyContract(name: string, makeStore: () => Promise<Store>, newSet: (members: number) => NewTestRunSet): void {
  describe(`Store contract: ${name}: idempotent create`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    const claim = (key: string, bodyHash = 'h1', ttlMs = 60_000) => ({ keyId: 'k1', key, bodyHash, ttlMs });

    test('the same key returns the first set and creates nothing more', async () => {
      const first = newSet(2);
      const a = await store.sets.createOnce(first, claim('abc'));
      assert.deepEqual(a, { setId: first.id, bodyHash: 'h1', created: true });
      const second = newSet(2);
      const b = await store.sets.createOnce(second, claim('abc'));
      assert.deepEqual(b, { setId: first.id, bodyHash: 'h1', created: false });
      assert.equal(await store.sets.get(second.id), undefined, 'the second set was not stored');
      assert.equal((await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 1000 })).length, 2);
    });

    test('a reused key reports the stored body hash, so a different body can be refused', async () => {
      const first = newSet(1);
      await store.sets.createOnce(first, claim('k', 'h1'));
      const again = await store.sets.createOnce(newSet(1), claim('k', 'h2'));
      assert.equal(again.created, false);
      assert.equal(again.bodyHash, 'h1');
    });

    test('keys are scoped per API key and expire', async () => {
      const a = newSet(1);
      await store.sets.createOnce(a, { keyId: 'k1', key: 'same', bodyHash: 'h', ttlMs: 1 });
      const other = newSet(1);
      assert.equal((await store.sets.createOnce(other, { keyId: 'k2', key: 'same', bodyHash: 'h', ttlMs: 60_000 })).created, true);
      await new Promise((r) => setTimeout(r, 20));
      const later = newSet(1);
      assert.equal((await store.sets.createOnce(later, { keyId: 'k1', key: 'same', bodyHash: 'h', ttlMs: 60_000 })).created, true, 'expired key is free again');
    });

    test('findCreatedOnce answers a replay from the key alone: live, per API key, and not once expired', async () => {
      const first = newSet(1);
      await store.sets.createOnce(first, claim('replay', 'h1'));
      assert.deepEqual(await store.sets.findCreatedOnce('k1', 'replay'), { setId: first.id, bodyHash: 'h1' });
      assert.equal(await store.sets.findCreatedOnce('k2', 'replay'), undefined, 'another API key');
      assert.equal(await store.sets.findCreatedOnce('k1', 'never'), undefined);
      await store.sets.createOnce(newSet(1), claim('brief', 'h', 1));
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(await store.sets.findCreatedOnce('k1', 'brief'), undefined, 'expired');
    });

    test('concurrent creates with one key: exactly one set', async () => {
      const sets = Array.from({ length: 8 }, () => newSet(1));
      const results = await Promise.all(sets.map((s) => store.sets.createOnce(s, claim('race'))));
      assert.equal(results.filter((r) => r.created).length, 1);
      assert.equal(new Set(results.map((r) => r.setId)).size, 1);
    });
  });
}
