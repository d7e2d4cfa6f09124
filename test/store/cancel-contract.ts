/**
 * Store contract for cancel and fail fast: unfinished members (waiting,
 * reserved, running, batched) end FAIL with the error at once, the set ends
 * FAIL with consistent counts, who cancelled is recorded, workers are told,
 * their later writes are fenced out, and an ended set is left alone. Run by
 * runStoreContract for every backend.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NewTestRunSet } from '../../src/core/types.js';
import { leaseOf, type Store } from '../../src/store/store.js';
import { caseSpec } from './batch-contract.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

const passed = { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 40 };
const byKey = { byKeyId: 'key-1', byKeyName: 'ci', error: 'cancelled' };

export function runCancelContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: cancel`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    test('cancel ends every unfinished member FAIL at once, the set FAIL, and says who', async () => {
      const set = newSet(5);
      set.maxFailures = 3;
      await store.sets.create(set);
      const heard: string[] = [];
      const unsubscribe = store.claims.onSetCancelled((id) => heard.push(id));
      // One passed, one running, one reserved for a slot's next turn, two waiting.
      const [done] = await store.claims.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 10_000 });
      assert.ok(await store.claims.finishRun(leaseOf(done!), passed));
      const [running, reserved] = await store.claims.claimRuns({ workerId: 'w1', limit: 2, reserve: 1, leaseMs: 10_000 });

      assert.deepEqual(await store.sets.control(set.id), { maxFailures: 3, cancellation: null });
      assert.deepEqual(await store.sets.cancel(set.id, byKey), { found: true, cancelled: true });

      const status = await store.sets.get(set.id);
      assert.equal(status?.status, 'FAIL');
      assert.deepEqual(status?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 4 });
      assert.ok(status?.endedAt && status.startedAt);
      const runs = new Map((await store.sets.listRuns(set.id)).map((r) => [r.id, r]));
      assert.equal(runs.get(done!.id)?.status, 'SUCCESS', 'an ended member keeps its outcome');
      for (const id of [running!.id, reserved!.id]) {
        assert.equal(runs.get(id)?.status, 'FAIL');
        assert.equal(runs.get(id)?.error, 'cancelled');
        assert.ok(runs.get(id)?.endedAt);
      }
      assert.ok((runs.get(running!.id)?.durationMs ?? -1) >= 0, 'a running member has a duration up to the cancel');
      assert.equal(runs.get(reserved!.id)?.durationMs, null, 'one that never began has none');
      assert.equal([...runs.values()].filter((r) => r.error === 'cancelled').length, 4);

      const control = await store.sets.control(set.id);
      assert.equal(control?.cancellation?.byKeyId, 'key-1');
      assert.equal(control?.cancellation?.byKeyName, 'ci');
      assert.equal(control?.cancellation?.error, 'cancelled');
      assert.match(control?.cancellation?.at ?? '', /Z$/);

      // The holder's writes are fenced out: nothing moves back.
      assert.equal(await store.claims.finishRun(leaseOf(running!), passed), false);
      assert.equal(await store.claims.heartbeat(leaseOf(running!), 10_000, 1), false);
      assert.equal(await store.claims.startRun(leaseOf(reserved!)), false);
      assert.deepEqual((await store.sets.get(set.id))?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 4 });
      assert.deepEqual(await store.claims.claimRuns({ workerId: 'w2', limit: 10, leaseMs: 10_000 }), [], 'nothing left to claim');

      for (let i = 0; i < 100 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      unsubscribe();
      assert.deepEqual(heard, [set.id], 'workers are told which set');
    });

    test('cancelling an ended set changes nothing; an unknown set is not found', async () => {
      const set = newSet(1);
      await store.sets.create(set);
      const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      await store.claims.finishRun(leaseOf(run!), passed);
      assert.deepEqual(await store.sets.cancel(set.id, byKey), { found: true, cancelled: false });
      assert.equal((await store.sets.get(set.id))?.status, 'SUCCESS');
      assert.equal((await store.sets.control(set.id))?.cancellation, null);
      assert.deepEqual(await store.sets.cancel('00000000-0000-4000-8000-000000000000', byKey), { found: false });
      assert.equal(await store.sets.control('00000000-0000-4000-8000-000000000000'), null);
    });

    test('a set that never started ends FAIL, started and ended at the cancel; a second cancel keeps the first', async () => {
      const set = newSet(3);
      await store.sets.create(set);
      assert.deepEqual(await store.sets.cancel(set.id, { byKeyId: null, byKeyName: null, error: 'cancelled: maxFailures 1 reached' }), { found: true, cancelled: true });
      const status = await store.sets.get(set.id);
      assert.equal(status?.status, 'FAIL');
      assert.deepEqual(status?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 3 });
      assert.ok(status?.startedAt && status.endedAt);
      assert.deepEqual(await store.sets.cancel(set.id, byKey), { found: true, cancelled: false });
      const control = await store.sets.control(set.id);
      assert.equal(control?.cancellation?.byKeyId, null, 'fail fast: no key');
      assert.equal(control?.cancellation?.error, 'cancelled: maxFailures 1 reached');
      assert.equal(control?.maxFailures, null);
    });

    test('batched members claimed for a Playwright process end too', async () => {
      const set = newSet(3);
      set.runs.forEach((run, i) => (run.spec = caseSpec(`case ${i}`)));
      await store.sets.create(set);
      const claimed = await store.claims.claimRuns({ workerId: 'w', limit: 3, leaseMs: 10_000 });
      assert.ok(await store.claims.startRun(leaseOf(claimed[0]!)));
      await store.sets.cancel(set.id, byKey);
      const runs = await store.sets.listRuns(set.id);
      assert.deepEqual(runs.map((r) => [r.status, r.error]), Array(3).fill(['FAIL', 'cancelled']));
      assert.deepEqual((await store.sets.get(set.id))?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 3 });
      assert.equal(await store.claims.finishRun(leaseOf(claimed[1]!), passed), false);
    });
  });
}
