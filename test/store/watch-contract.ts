/**
 * Store contract for the waiting status (GET …/{id} with Prefer: wait): one
 * read of many sets at once (getSets), which a process watching sets for its
 * waiting clients makes once a tick, and the embedded store's change feed
 * (onSetChanged), which fires only once a set's new state can be read.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NewTestRunSet } from '../../src/core/types.js';
import { leaseOf, type Store } from '../../src/store/store.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

const passed = { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 40 };

export function runWatchContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: watching sets`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    test('getSets reads the sets that exist, each once, and skips unknown and malformed ids', async () => {
      const [a, b] = [newSet(1), newSet(2)];
      await store.sets.create(a);
      await store.sets.create(b);
      assert.deepEqual(await store.sets.getMany([]), []);
      const found = await store.sets.getMany([b.id, 'not-a-uuid', a.id, '00000000-0000-4000-8000-000000000000', b.id]);
      assert.deepEqual(found.map((s) => s.id).sort(), [a.id, b.id].sort());
      const second = found.find((s) => s.id === b.id);
      assert.deepEqual(second, await store.sets.get(b.id));
      assert.deepEqual(second?.counts, { WAITING: 2, RUNNING: 0, SUCCESS: 0, FAIL: 0 });
    });

    test('the embedded store feeds set changes once they can be read; PostgreSQL has no in-process feed', async () => {
      // PostgreSQL's writes come from other processes: a watcher polls getSets instead.
      assert.equal(typeof store.sets.onChanged === 'function', store.kind === 'sqlite');
      if (!store.sets.onChanged) return;
      const set = newSet(2);
      await store.sets.create(set);
      const seen: string[] = [];
      const unsubscribe = store.sets.onChanged((id) => {
        void store.sets.get(id).then((s) => seen.push(`${s?.status} ${s?.counts.RUNNING}/${s?.counts.SUCCESS}`));
      });
      const [run] = await store.claims.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 10_000 });
      await new Promise((r) => setTimeout(r, 20));
      assert.ok(await store.claims.finishRun(leaseOf(run!), passed));
      await new Promise((r) => setTimeout(r, 20));
      unsubscribe();
      const [other] = await store.claims.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 10_000 });
      assert.ok(other);
      await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(seen, ['RUNNING 1/0', 'RUNNING 0/1'], 'one call per write, each after the write; none after unsubscribing');
    });
  });
}
