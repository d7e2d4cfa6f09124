/**
 * Store contract for queues per environment (src/store/queue.ts): a set beyond
 * its environment's maxConcurrentSets stays WAITING with its members unclaimed,
 * in creation order, and starts when a set ahead of it ends (however it ends:
 * passed, failed, cancelled); claims of every shape leave queued sets alone; a
 * set's place says how many sets are ahead and which hold the places; an
 * ending set with a limit wakes the claimers. Run by runStoreContract for every
 * backend.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClaimedRun, NewTestRunSet } from '../../src/core/types.js';
import { leaseOf, type Store } from '../../src/store/store.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

const passed = { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 40 };

export function runQueueContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: queues per environment`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    /** Creates `count` sets of `members` members in `env` with a limit, one after the other. */
    async function queued(count: number, limit: number, members = 2, env = 'staging'): Promise<NewTestRunSet[]> {
      const sets: NewTestRunSet[] = [];
      for (let i = 0; i < count; i++) {
        const set = { ...newSet(members, env), maxConcurrentSets: limit };
        await store.sets.create(set);
        sets.push(set);
      }
      return sets;
    }

    const setsOf = (claimed: readonly ClaimedRun[]) => [...new Set(claimed.map((c) => c.setId))].sort();
    const finishAll = async (claimed: readonly ClaimedRun[]) => {
      for (const run of claimed) assert.ok(await store.claims.finishRun(leaseOf(run), passed));
    };

    test('beyond the limit a set waits, members unclaimed, and the next in creation order starts when one ends', async () => {
      const [a, b, c] = await queued(3, 1);
      const free = newSet(1, 'preview'); // another environment, no limit: never waits
      await store.sets.create(free);

      const first = await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 60_000 });
      assert.deepEqual(setsOf(first), [a!.id, free.id].sort(), 'only the first set of staging and the set of preview');
      assert.equal((await store.sets.get(b!.id))?.status, 'WAITING');
      assert.deepEqual((await store.sets.get(b!.id))?.counts, { WAITING: 2, RUNNING: 0, SUCCESS: 0, FAIL: 0 });
      assert.equal(await store.setViews.queuePlace(a!.id), null, 'the first holds its place');
      assert.deepEqual(await store.setViews.queuePlace(b!.id), { ahead: 1, limit: 1, holders: [a!.id] });
      assert.deepEqual(await store.setViews.queuePlace(c!.id), { ahead: 2, limit: 1, holders: [a!.id] });
      assert.equal(await store.setViews.queuePlace(free.id), null, 'no limit: never queued');

      await finishAll(first);
      assert.equal((await store.sets.get(a!.id))?.status, 'SUCCESS');
      assert.equal(await store.setViews.queuePlace(b!.id), null, 'the next set holds the place now, before any member of it started');
      assert.deepEqual(await store.setViews.queuePlace(c!.id), { ahead: 1, limit: 1, holders: [b!.id] });
      const second = await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 60_000 });
      assert.deepEqual(setsOf(second), [b!.id]);
      await finishAll(second);
      assert.deepEqual(setsOf(await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 60_000 })), [c!.id]);
      assert.equal(await store.setViews.queuePlace(a!.id), null, 'an ended set has no place');
    });

    test('a limit of two: two sets run at once, and a failed set frees its place as a passed one does', async () => {
      const [a, b, c] = await queued(3, 2, 1);
      const first = await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 60_000 });
      assert.deepEqual(setsOf(first), [a!.id, b!.id].sort());
      assert.deepEqual(await store.setViews.queuePlace(c!.id), { ahead: 1, limit: 2, holders: [a!.id, b!.id] });
      const failing = first.find((r) => r.setId === b!.id)!;
      assert.ok(await store.claims.finishRun(leaseOf(failing), { ...passed, status: 'FAIL', error: 'boom' }));
      assert.deepEqual(setsOf(await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 60_000 })), [c!.id]);
    });

    test('every claim shape leaves queued sets alone: by environment, skipping batch keys, finish-and-claim', async () => {
      const [a, b] = await queued(2, 1, 3);
      const byEnv = await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 60_000, envs: ['staging'] });
      assert.deepEqual(setsOf(byEnv), [a!.id]);
      assert.equal(byEnv.length, 3);
      const skipping = await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 60_000, skipBatchKeys: ['none'] });
      assert.deepEqual(skipping, [], 'the queued set is not claimable by a filtered claim either');
      const [last, ...rest] = byEnv;
      await finishAll(rest);
      const step = await store.claims.finishAndClaim(leaseOf(last!), passed, { workerId: 'w', limit: 10, leaseMs: 60_000 });
      assert.ok(step.finished);
      // PostgreSQL's one statement claims from what it saw before the finish (the set ahead unfinished): nothing;
      // SQLite's transaction sees its own finish: the next set. Either way the next set is claimable at once.
      const after = await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 60_000 });
      assert.deepEqual(setsOf([...step.claimed, ...after]), [b!.id]);
      assert.equal(step.claimed.length + after.length, 3);
    });

    test('cancelling a queued set takes it out of the queue; cancelling the running one lets the next start', async () => {
      const [a, b, c] = await queued(3, 1);
      await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 60_000 });
      assert.deepEqual(await store.sets.cancel(b!.id, { byKeyId: null, byKeyName: null, error: 'cancelled' }), { found: true, cancelled: true });
      const cancelled = await store.sets.get(b!.id);
      assert.equal(cancelled?.status, 'FAIL');
      assert.deepEqual(cancelled?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 2 });
      assert.ok((await store.sets.listRuns(b!.id)).every((r) => r.status === 'FAIL' && r.error === 'cancelled' && r.durationMs === null));
      assert.deepEqual(await store.setViews.queuePlace(c!.id), { ahead: 1, limit: 1, holders: [a!.id] }, 'one set ahead now');

      await store.sets.cancel(a!.id, { byKeyId: null, byKeyName: null, error: 'cancelled' });
      assert.equal(await store.setViews.queuePlace(c!.id), null);
      assert.deepEqual(setsOf(await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 60_000 })), [c!.id]);
    });

    test('a set with a limit that ends wakes the claimers', async () => {
      const [a] = await queued(2, 1, 1);
      const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 10, leaseMs: 60_000 });
      assert.equal(run?.setId, a!.id);
      let woken = 0;
      const off = store.claims.onRunsWaiting(() => woken++);
      try {
        assert.ok(await store.claims.finishRun(leaseOf(run), passed));
        const deadline = Date.now() + 5000;
        while (woken === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        assert.ok(woken > 0, 'the end of the set woke the claimers');
      } finally {
        off();
      }
    });
  });
}
