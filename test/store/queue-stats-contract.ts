/**
 * Store contract for WorkersStore.queueStats, what a metrics scrape reads: members
 * waiting in unfinished sets (reserved ones still count: they are WAITING in the
 * set's counts), webhook deliveries pending, live workers, queued sets by
 * environment (the queue's own rule, src/store/queue.ts). Run by
 * runStoreContract for every backend.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NewTestRunSet } from '../../src/core/types.js';
import { leaseOf, type Store } from '../../src/store/store.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

const passed = { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 40 };

export function runQueueStatsContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: queue stats`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    test('members waiting, deliveries pending and live workers, store-wide', async () => {
      assert.deepEqual(await store.workers.queueStats(60_000), { waitingMembers: 0, runningMembers: 0, pendingDeliveries: 0, liveWorkers: 0, queuedSets: {} });
      const one = newSet(1);
      await store.sets.create(one);
      await store.sets.create(newSet(3, 'preview'));
      assert.equal((await store.workers.queueStats(60_000)).waitingMembers, 4);

      const [running] = await store.claims.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 10_000 });
      const [reserved] = await store.claims.claimRuns({ workerId: 'w1', limit: 1, reserve: 1, leaseMs: 10_000 });
      assert.ok(running && reserved);
      const held = await store.workers.queueStats(60_000);
      assert.equal(held.waitingMembers, 3, 'a started member left the queue; a reserved one is still WAITING');
      assert.equal(held.runningMembers, 1, 'the started member runs; the reserved one has not begun');

      // The first set ends: its event fans out into two deliveries, pending until attempted.
      assert.ok(await store.claims.finishRun(leaseOf(running), passed));
      await store.webhooks.fanOut((event) => (event.event === 'set.finished' ? ['chat', 'pager'] : []), 10);
      await store.workers.register({ id: 'w1', host: 'h', pid: 1, slots: 2 });
      await store.workers.register({ id: 'w2', host: 'h', pid: 2, slots: 4 });
      assert.deepEqual(await store.workers.queueStats(60_000), { waitingMembers: 3, runningMembers: 0, pendingDeliveries: 2, liveWorkers: 2, queuedSets: {} });
      assert.equal((await store.workers.queueStats(-60_000)).liveWorkers, 0, 'none heartbeat within the window');
    });

    test('queued sets by environment: those past their limit, until a place frees or they are cancelled', async () => {
      const limited = (env: string, limit: number) => ({ ...newSet(1, env), maxConcurrentSets: limit });
      const staging = [limited('staging', 1), limited('staging', 1), limited('staging', 1)];
      for (const set of [...staging, limited('preview', 2), limited('preview', 2), newSet(1, 'free'), newSet(1, 'free')]) await store.sets.create(set);
      assert.deepEqual((await store.workers.queueStats(60_000)).queuedSets, { staging: 2 }, 'preview is within its limit of 2; free has none');

      await store.sets.create(limited('preview', 2));
      const [first] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      assert.equal(first?.setId, staging[0]!.id);
      assert.ok(await store.claims.finishRun(leaseOf(first), passed));
      assert.deepEqual((await store.workers.queueStats(60_000)).queuedSets, { staging: 1, preview: 1 }, 'an ended set frees its place');

      await store.sets.cancel(staging[2]!.id, { byKeyId: null, byKeyName: null, error: 'cancelled' });
      assert.deepEqual((await store.workers.queueStats(60_000)).queuedSets, { preview: 1 }, 'a cancelled set leaves the queue');
    });
  });
}
