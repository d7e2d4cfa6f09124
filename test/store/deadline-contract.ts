/**
 * Store contract for set deadlines (src/core/deadlines.ts, src/sets/deadlines.ts):
 * SetsStore.overdue finds the unfinished sets past their deadline by the
 * store's clock, and the sweep cancels them through the one cancel path, their
 * unfinished members ending FAIL with `set timeout … reached`: a set whose
 * member keeps losing its lease, and a set still queued. Run by
 * runStoreContract for every backend.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NewTestRunSet } from '../../src/core/types.js';
import { leaseOf, type Store } from '../../src/store/store.js';
import { cancelOverdueSets } from '../../src/sets/deadlines.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

const passed = { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 40 };

export function runDeadlineContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: set deadlines`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    /** A set created `agoMs` ago with this timeout. */
    const createdAgo = (members: number, agoMs: number, timeoutSeconds: number, extra: Partial<NewTestRunSet> = {}): NewTestRunSet => ({
      ...newSet(members),
      createdAt: new Date(Date.now() - agoMs).toISOString(),
      timeoutSeconds,
      ...extra,
    });

    test('only unfinished sets past their deadline are overdue; the sweep cancels them with the reason', async () => {
      const late = createdAgo(2, 10_000, 5);
      const inTime = createdAgo(1, 10_000, 3600);
      const ended = createdAgo(1, 10_000, 5);
      const none = createdAgo(1, 10_000, 5, { timeoutSeconds: null }); // stored before deadlines: none
      for (const set of [late, inTime, ended, none]) await store.sets.create(set);
      const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 60_000, setId: ended.id });
      assert.ok(await store.claims.finishRun(leaseOf(run!), passed));

      assert.deepEqual(await store.sets.overdue(10), [{ id: late.id, timeoutSeconds: 5 }]);
      assert.equal(await cancelOverdueSets(store), 1);
      const status = await store.sets.get(late.id);
      assert.equal(status?.status, 'FAIL');
      assert.deepEqual((await store.sets.listRuns(late.id)).map((r) => [r.status, r.error]), [['FAIL', 'set timeout 5s reached'], ['FAIL', 'set timeout 5s reached']]);
      assert.equal((await store.sets.control(late.id))?.cancellation?.error, 'set timeout 5s reached');
      assert.deepEqual(await store.sets.overdue(10), [], 'a cancelled set is no longer overdue');
      assert.equal(await cancelOverdueSets(store), 0);
      assert.equal((await store.sets.get(inTime.id))?.status, 'WAITING');
      assert.equal((await store.sets.get(none.id))?.status, 'WAITING');
    });

    test('a member that keeps losing its lease cannot keep its set open past the deadline', async () => {
      const set = createdAgo(1, 1000, 60);
      await store.sets.create(set);
      for (let lost = 0; lost < 3; lost++) {
        const [run] = await store.claims.claimRuns({ workerId: `w${lost}`, limit: 1, leaseMs: 1 });
        assert.equal(run?.setId, set.id);
        await new Promise((resolve) => setTimeout(resolve, 20));
        assert.deepEqual(await store.claims.reapExpired(100), { requeued: 1, failed: 0 });
      }
      assert.equal((await store.sets.get(set.id))?.status, 'RUNNING');
      assert.deepEqual(await store.sets.overdue(10), [], 'not yet: 60 s');

      // The same member, its deadline passed while it was being re-claimed.
      const overdue = createdAgo(1, 120_000, 60);
      await store.sets.create(overdue);
      const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 1, setId: overdue.id });
      await new Promise((resolve) => setTimeout(resolve, 20));
      await store.claims.reapExpired(100);
      assert.equal(await cancelOverdueSets(store), 1);
      const [member] = await store.sets.listRuns(overdue.id);
      assert.deepEqual([member?.status, member?.error], ['FAIL', 'set timeout 1m reached']);
      assert.equal(await store.claims.finishRun(leaseOf(run!), passed), false, 'the lost lease writes nothing');
    });

    test('a queued set past its deadline is cancelled and leaves the queue; the running one runs on', async () => {
      const running = createdAgo(1, 0, 3600, { maxConcurrentSets: 1 });
      const queued = createdAgo(1, 0, 1, { maxConcurrentSets: 1, createdAt: new Date(Date.now() - 5000).toISOString() });
      const behind = createdAgo(1, 0, 3600, { maxConcurrentSets: 1 });
      for (const set of [running, queued, behind]) await store.sets.create(set);
      const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 60_000 });
      assert.equal(run?.setId, running.id);
      assert.deepEqual(await store.setViews.queuePlace(behind.id), { ahead: 2, limit: 1, holders: [running.id] });

      assert.equal(await cancelOverdueSets(store), 1);
      assert.deepEqual((await store.sets.listRuns(queued.id)).map((r) => [r.status, r.error, r.startedAt]), [['FAIL', 'set timeout 1s reached', null]]);
      assert.equal((await store.sets.get(running.id))?.status, 'RUNNING');
      assert.deepEqual(await store.setViews.queuePlace(behind.id), { ahead: 1, limit: 1, holders: [running.id] });
    });
  });
}
