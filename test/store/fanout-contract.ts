/**
 * Store contract for fan-out: duration history (the last DURATION_SAMPLES
 * successful durations per test and environment), claim order = insertion order
 * (the planner inserts longest expected first), a batch's waiting work, and
 * where each member ran (`workerId`, kept after it ends). Run by
 * runStoreContract for every backend.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NewTestRunSet } from '../../src/core/types.js';
import { DURATION_SAMPLES, leaseOf, type Store } from '../../src/store/store.js';
import { caseSpec } from './batch-contract.js';
import { batchKeyOf } from '../../src/core/batch.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

const passed = { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 40 };

export function runFanoutContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: fan-out`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    test('duration history keeps the newest samples per test and environment, oldest first', async () => {
      assert.deepEqual(await store.durations.history('staging'), new Map());
      const many = Array.from({ length: DURATION_SAMPLES + 3 }, (_, i) => ({ env: 'staging', name: 'checkout', ms: 100 + i }));
      await store.durations.record(many.slice(0, 5));
      // One call may carry several samples of one test (a flush of a busy worker).
      await store.durations.record([...many.slice(5), { env: 'staging', name: 'login', ms: 7.6 }, { env: 'preview', name: 'checkout', ms: 9 }]);
      await store.durations.record([]);
      const staging = await store.durations.history('staging');
      assert.deepEqual(staging.get('checkout'), many.slice(-DURATION_SAMPLES).map((s) => s.ms));
      assert.deepEqual(staging.get('login'), [8], 'rounded to whole milliseconds');
      assert.deepEqual([...staging.keys()].sort(), ['checkout', 'login']);
      assert.deepEqual((await store.durations.history('preview')).get('checkout'), [9], 'environments are apart');
    });

    test('members are claimed in the order they were inserted; listed in config order, with their expected durations', async () => {
      const set = newSet(3);
      // The planner inserts longest expected first: position 2, then 0, then 1.
      const [a, b, c] = set.runs as [NewTestRunSet['runs'][number], NewTestRunSet['runs'][number], NewTestRunSet['runs'][number]];
      set.runs = [
        { ...c, expectedMs: 3000 },
        { ...a, expectedMs: 2000 },
        { ...b, expectedMs: 1000 },
      ];
      await store.sets.create(set);
      const first = await store.claims.claimRuns({ workerId: 'w1', limit: 2, leaseMs: 10_000 });
      assert.deepEqual(first.map((r) => r.id), [c.id, a.id]);
      assert.deepEqual(first.map((r) => [r.env, r.expectedMs]), [['staging', 3000], ['staging', 2000]]);
      const listed = await store.sets.listRuns(set.id);
      assert.deepEqual(listed.map((r) => r.position), [0, 1, 2]);
      assert.deepEqual(listed.map((r) => r.expectedMs), [2000, 1000, 3000]);
    });

    test('workerId names the worker that started a member, and stays after it ends', async () => {
      const set = newSet(2);
      await store.sets.create(set);
      const [run] = await store.claims.claimRuns({ workerId: 'host-a/1', limit: 1, leaseMs: 10_000 });
      const byId = async () => new Map((await store.sets.listRuns(set.id)).map((r) => [r.id, r]));
      assert.equal((await byId()).get(run!.id)?.workerId, 'host-a/1');
      assert.equal((await byId()).get(set.runs[1]!.id)?.workerId, null, 'not started: no worker yet');
      assert.ok(await store.claims.finishRun(leaseOf(run!), passed));
      assert.equal((await byId()).get(run!.id)?.workerId, 'host-a/1', 'kept once it ended');

      // A reserved member's worker is known when it starts, through startRun or a slot's step.
      const [held] = await store.claims.claimRuns({ workerId: 'host-b/2', limit: 1, reserve: 1, leaseMs: 10_000 });
      assert.equal((await byId()).get(held!.id)?.workerId, null, 'reserved, not started');
      const step = await store.claims.finishAndClaim(leaseOf(held!), { ...passed, status: 'FAIL', error: 'x' }, { workerId: 'host-b/2', limit: 0, leaseMs: 10_000 });
      assert.equal(step.finished, true);
      assert.equal((await byId()).get(held!.id)?.workerId, null, 'a reserved member that ended without starting ran nowhere');
    });

    test('batched members record their worker when they begin', async () => {
      const set = newSet(2);
      set.runs.forEach((run, i) => (run.spec = caseSpec(`case ${i}`)));
      await store.sets.create(set);
      const claimed = await store.claims.claimRuns({ workerId: 'host-c/3', limit: 2, leaseMs: 10_000 });
      assert.ok(await store.claims.startRun(leaseOf(claimed[0]!)));
      const runs = new Map((await store.sets.listRuns(set.id)).map((r) => [r.id, r.workerId]));
      assert.equal(runs.get(claimed[0]!.id), 'host-c/3');
      assert.equal(runs.get(claimed[1]!.id), null);
    });

    test("waitingWork gives the expected durations of a batch's unheld members, in claim order", async () => {
      const set = newSet(5);
      set.runs.forEach((run, i) => {
        run.spec = caseSpec(`case ${i}`, i < 4 ? 'e2e' : 'other');
        run.expectedMs = 5000 - i * 1000;
      });
      await store.sets.create(set);
      const [head] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      const key = head!.batchKey!;
      assert.deepEqual(await store.claims.waitingWork(set.id, key, 100), [4000, 3000, 2000], 'the held one and the other entry are left out');
      assert.deepEqual(await store.claims.waitingWork(set.id, key, 2), [4000, 3000]);
      assert.deepEqual(await store.claims.waitingWork(set.id, 'playwright:nothing', 100), []);
    });

    test('workers registry: batchWorkers lists the live workers with what each holds of one batch; a removed or stale one drops out', async () => {
      const set = newSet(4);
      set.runs.forEach((run, i) => {
        run.spec = caseSpec(`case ${i}`, i < 3 ? 'e2e' : 'other');
        run.expectedMs = 1000 * (i + 1);
      });
      await store.sets.create(set);
      const key = batchKeyOf(caseSpec('case 0', 'e2e'))!;
      assert.deepEqual(await store.workers.batchWorkers(set.id, key, 60_000), []);
      await store.workers.register({ id: 'a', host: 'h1', pid: 1, slots: 2 });
      await store.workers.register({ id: 'b', host: 'h2', pid: 2, slots: 4 });
      await store.workers.register({ id: 'b', host: 'h2', pid: 2, slots: 4 }); // again: still one entry
      // b holds two members of the batch (one begun), a holds the other entry's member.
      const taken = await store.claims.claimRuns({ workerId: 'b', limit: 2, leaseMs: 10_000 });
      assert.ok(await store.claims.startRun(leaseOf(taken[0]!)));
      const otherEntry = await store.claims.claimRuns({ workerId: 'a', limit: 1, leaseMs: 10_000, skipBatchKeys: [key] });
      assert.equal(otherEntry[0]!.spec.name, set.runs[3]!.spec.name);
      assert.deepEqual(await store.workers.batchWorkers(set.id, key, 60_000), [
        { id: 'a', host: 'h1', slots: 2, holding: 0, heldMs: 0 },
        { id: 'b', host: 'h2', slots: 4, holding: 2, heldMs: 3000 },
      ]);
      assert.equal(await store.workers.heartbeat('a'), true);
      await store.workers.remove('a');
      assert.equal(await store.workers.heartbeat('a'), false, 'gone: the caller registers again');
      assert.deepEqual((await store.workers.batchWorkers(set.id, key, 60_000)).map((w) => w.id), ['b']);
      await new Promise((r) => setTimeout(r, 60));
      assert.deepEqual(await store.workers.batchWorkers(set.id, key, 30), [], 'silent for longer than the limit: stale');
      assert.equal(await store.workers.heartbeat('b'), false, 'a stale worker is dropped');
    });

    test('a worker id is bound to the key that registered it: another key neither re-registers, heartbeats nor removes it', async () => {
      assert.equal(await store.workers.register({ id: 'w', host: 'h', pid: 1, slots: 2, keyId: 'key-1' }), true);
      assert.equal(await store.workers.register({ id: 'w', host: 'h', pid: 1, slots: 64, keyId: 'key-2' }), false, 'another key\'s id');
      assert.equal(await store.workers.register({ id: 'w', host: 'h', pid: 1, slots: 64 }), false, 'nor the store\'s own workers');
      assert.equal(await store.workers.heartbeat('w', 'key-2'), false);
      assert.equal(await store.workers.heartbeat('w'), false);
      await store.workers.remove('w', 'key-2');
      await store.workers.remove('w');
      assert.deepEqual((await store.workers.list(60_000)).map((w) => [w.id, w.slots]), [['w', 2]], 'as key-1 registered it');
      assert.equal(await store.workers.register({ id: 'w', host: 'h', pid: 1, slots: 3, keyId: 'key-1' }), true, 'its own key registers it again');
      assert.equal(await store.workers.heartbeat('w', 'key-1'), true);
      // A worker of the store's own (no key) is out of every key's reach alike.
      assert.equal(await store.workers.register({ id: 'own', host: 'h', pid: 2, slots: 1 }), true);
      assert.equal(await store.workers.heartbeat('own', 'key-1'), false);
      await store.workers.remove('own', 'key-1');
      assert.equal(await store.workers.heartbeat('own'), true);
      await store.workers.remove('w', 'key-1');
      assert.deepEqual((await store.workers.list(60_000)).map((w) => w.id), ['own']);
    });

    test('a claim leaves the batch keys it skips alone, by both kinds of claim', async () => {
      const set = newSet(4);
      set.runs.forEach((run, i) => {
        if (i < 2) run.spec = caseSpec(`case ${i}`, 'blocked');
      });
      await store.sets.create(set);
      const key = batchKeyOf(caseSpec('case 0', 'blocked'))!;
      // The blocked batch is inserted first, so a plain claim would take it first.
      const [first] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000, skipBatchKeys: [key, 'playwright:other'] });
      assert.equal(first!.batchKey, null);
      const next = await store.claims.finishAndClaim(leaseOf(first!), passed, { workerId: 'w', limit: 3, leaseMs: 10_000, skipBatchKeys: [key] });
      assert.deepEqual(next.claimed.map((r) => r.batchKey), [null]);
      const rest = await store.claims.claimRuns({ workerId: 'w', limit: 3, leaseMs: 10_000 });
      assert.deepEqual(rest.map((r) => r.batchKey), [key, key], 'without the skip, the batch is claimed');
    });

    test('listWorkers: the live workers, by host, with what each runs and holds; stale ones left out', async () => {
      assert.deepEqual(await store.workers.list(60_000), []);
      await store.workers.register({ id: 'h2/9', host: 'h2', pid: 9, slots: 2 });
      await store.workers.register({ id: 'h1/7', host: 'h1', pid: 7, slots: 4 });
      const set = newSet(4);
      await store.sets.create(set);
      // h1 begins one member and holds one for its slot's next; h2 begins one.
      const [run, held] = await store.claims.claimRuns({ workerId: 'h1/7', limit: 2, reserve: 1, leaseMs: 10_000 });
      await store.claims.claimRuns({ workerId: 'h2/9', limit: 1, leaseMs: 10_000 });
      let list = await store.workers.list(60_000);
      assert.deepEqual(list.map((w) => [w.id, w.host, w.pid, w.slots, w.held, w.running.map((r) => r.runId)]), [
        ['h1/7', 'h1', 7, 4, 1, [run!.id]],
        ['h2/9', 'h2', 9, 2, 0, [set.runs[2]!.id]],
      ]);
      const first = list[0]!;
      assert.equal(first.running[0]!.setId, set.id);
      assert.equal(first.running[0]!.name, set.runs[0]!.spec.name);
      assert.equal(first.running[0]!.type, set.runs[0]!.spec.type);
      assert.match(first.running[0]!.startedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.match(first.startedAt, /Z$/);
      assert.ok(Date.parse(first.heartbeatAt) >= Date.parse(first.startedAt));
      assert.ok(held, 'a reserved member was claimed');

      await store.claims.finishRun(leaseOf(run!), passed);
      list = await store.workers.list(60_000);
      assert.deepEqual(list[0]!.running, [], 'an ended member is no longer running');
      await store.workers.remove('h2/9');
      assert.deepEqual((await store.workers.list(60_000)).map((w) => w.id), ['h1/7']);
      await new Promise((r) => setTimeout(r, 60));
      assert.deepEqual(await store.workers.list(30), [], 'silent for longer than the limit: not listed');
    });
  });
}
