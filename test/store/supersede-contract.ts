/**
 * Store contract for superseded sets (src/sets/supersede.ts): a new set of a
 * concurrency group cancels exactly the older unfinished sets of its group in
 * its environment — queued, waiting or running — through the one cancel path,
 * their unfinished members ending FAIL with `superseded by <new id>`; sets of
 * another group, another environment, no group, or already ended stay as they
 * are. Run by runStoreContract for every backend.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NewTestRunSet } from '../../src/core/types.js';
import { leaseOf, type Store } from '../../src/store/store.js';
import { supersedeOlder } from '../../src/sets/supersede.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

const passed = { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 40 };

export function runSupersedeContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: superseded sets`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    const created = async (group: string | null, env = 'staging', extra: Partial<NewTestRunSet> = {}): Promise<NewTestRunSet> => {
      const set = { ...newSet(2, env), concurrencyGroup: group, ...extra };
      await store.sets.create(set);
      return set;
    };

    test('a new set of a group cancels exactly the older unfinished sets of its group and environment', async () => {
      const running = await created('pr-7');
      const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 60_000, setId: running.id });
      const waiting = await created('pr-7');
      const ended = await created('pr-7', 'staging');
      for (const r of await store.claims.claimRuns({ workerId: 'w', limit: 2, leaseMs: 60_000, setId: ended.id })) assert.ok(await store.claims.finishRun(leaseOf(r), passed));
      const otherGroup = await created('pr-8');
      const otherEnv = await created('pr-7', 'preview');
      const noGroup = await created(null);
      const newest = await created('pr-7');
      const later = await created('pr-7'); // created after `newest`: never superseded by it

      assert.deepEqual(await store.sets.olderInGroup(newest.id), [running.id, waiting.id]);
      assert.deepEqual((await supersedeOlder(store, newest.id)).sort(), [running.id, waiting.id].sort());
      const reason = `superseded by ${newest.id}`;
      for (const set of [running, waiting]) {
        assert.equal((await store.sets.get(set.id))?.status, 'FAIL');
        assert.deepEqual((await store.sets.listRuns(set.id)).map((r) => r.error), [reason, reason]);
        assert.equal((await store.sets.control(set.id))?.cancellation?.error, reason);
      }
      assert.equal(await store.claims.finishRun(leaseOf(run!), passed), false, 'the running member\'s lease is gone');
      assert.equal((await store.sets.get(ended.id))?.status, 'SUCCESS');
      for (const set of [otherGroup, otherEnv, noGroup, newest, later]) assert.equal((await store.sets.get(set.id))?.status, 'WAITING');
      assert.deepEqual(await store.sets.olderInGroup(noGroup.id), [], 'no group: supersedes nothing');
      assert.deepEqual(await supersedeOlder(store, newest.id), [], 'a second call finds nothing more');
    });

    test('a queued set is superseded too, and the newer set takes its place in the queue', async () => {
      const limit = { maxConcurrentSets: 1 };
      const holder = await created(null, 'staging', limit);
      await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 60_000 });
      const queued = await created('main', 'staging', limit);
      const newer = await created('main', 'staging', limit);
      assert.deepEqual(await store.setViews.queuePlace(newer.id), { ahead: 2, limit: 1, holders: [holder.id] });
      assert.deepEqual(await supersedeOlder(store, newer.id), [queued.id]);
      assert.deepEqual((await store.sets.listRuns(queued.id)).map((r) => [r.error, r.startedAt]), [[`superseded by ${newer.id}`, null], [`superseded by ${newer.id}`, null]]);
      assert.deepEqual(await store.setViews.queuePlace(newer.id), { ahead: 1, limit: 1, holders: [holder.id] });
    });
  });
}
