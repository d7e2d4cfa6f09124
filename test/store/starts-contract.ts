/**
 * Store contract for member starts (src/core/starts.ts): every move from
 * WAITING to RUNNING is a start, a RUNNING member whose lease is reaped or that
 * its worker gives back lost its start (`lease lost`, `worker lost`), and a
 * framework's retry within one start is `attempts`, never `starts`. A reserved
 * member that never began loses no start. Run by runStoreContract for every
 * backend.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NewTestRunSet, TestRunRecord } from '../../src/core/types.js';
import { leaseOf, type Store } from '../../src/store/store.js';
import { MAX_LOST_STARTS_KEPT, passedHow, ranAgainText } from '../../src/core/starts.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

const passed = { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 40 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function runStartsContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: member starts`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    const member = async (setId: string, index = 0): Promise<TestRunRecord> => {
      const run = (await store.sets.listRuns(setId))[index];
      assert.ok(run, `member ${index} of ${setId}`);
      return run;
    };
    const runsOf = (m: TestRunRecord) => ({ status: m.status, attempts: m.attempts, starts: m.starts, restarts: m.restarts });

    test('a new member has not started; a claim that starts it counts one start', async () => {
      const set = newSet(1);
      await store.sets.create(set);
      assert.deepEqual(runsOf(await member(set.id)), { status: 'WAITING', attempts: 0, starts: 0, restarts: [] });
      const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      assert.deepEqual(runsOf(await member(set.id)), { status: 'RUNNING', attempts: 0, starts: 1, restarts: [] });
      assert.ok(await store.claims.finishRun(leaseOf(run!), passed));
      const ended = await member(set.id);
      assert.deepEqual(runsOf(ended), { status: 'SUCCESS', attempts: 1, starts: 1, restarts: [] });
      assert.equal(passedHow(ended), 'first run');
    });

    test('started, its lease reaped, started again: two starts, the restart because the lease was lost; its pass is not flaky', async () => {
      const set = newSet(1);
      await store.sets.create(set);
      await store.claims.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 1 });
      await sleep(20);
      assert.deepEqual(await store.claims.reapExpired(3), { requeued: 1, failed: 0 });
      assert.deepEqual(runsOf(await member(set.id)), { status: 'WAITING', attempts: 0, starts: 1, restarts: [] }, 'lost, not started again yet');
      const [again] = await store.claims.claimRuns({ workerId: 'w2', limit: 1, leaseMs: 10_000 });
      assert.deepEqual(runsOf(await member(set.id)), { status: 'RUNNING', attempts: 0, starts: 2, restarts: ['lease lost'] });
      assert.ok(await store.claims.finishRun(leaseOf(again!), passed));
      const ended = await member(set.id);
      assert.deepEqual(runsOf(ended), { status: 'SUCCESS', attempts: 1, starts: 2, restarts: ['lease lost'] });
      assert.equal(passedHow(ended), 'after a lost lease');
      // History reads the starts, so a rerun after a lost lease is counted apart from a retry (src/history/flakiness.ts).
      const runs = (await store.history.testRuns({ env: set.env, name: ended.name, limit: 10 })).runs.filter((r) => r.testRunId === ended.id);
      assert.deepEqual(runs.map((r) => [r.starts, r.attempts]), [[2, 1]]);
      const page = await store.history.listTests({ env: set.env, nameContains: ended.name, limit: 10, window: 50 });
      const window = page.tests.find((t) => t.name === ended.name)?.runs.filter((r) => r.testRunId === ended.id);
      assert.deepEqual(window?.map((r) => [r.starts, r.attempts]), [[2, 1]]);
    });

    test('a retry within one start is attempts, not starts', async () => {
      const set = newSet(1);
      await store.sets.create(set);
      const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      assert.ok(await store.claims.heartbeat(leaseOf(run!), 10_000, 2));
      assert.ok(await store.claims.finishRun(leaseOf(run!), { ...passed, attempts: 2 }));
      const ended = await member(set.id);
      assert.deepEqual(runsOf(ended), { status: 'SUCCESS', attempts: 2, starts: 1, restarts: [] });
      assert.equal(passedHow(ended), 'on retry');
    });

    test('a reserved member that never began is not started, whether its lease is lost or it is given back', async () => {
      const set = newSet(2);
      await store.sets.create(set);
      // The slot's next member is reserved (still WAITING), the first one starts.
      const [first, reserved] = await store.claims.claimRuns({ workerId: 'w', limit: 2, reserve: 1, leaseMs: 1 });
      assert.ok(first && reserved);
      await sleep(20);
      assert.deepEqual(await store.claims.reapExpired(3), { requeued: 2, failed: 0 });
      assert.deepEqual(runsOf(await member(set.id, 1)), { status: 'WAITING', attempts: 0, starts: 0, restarts: [] }, 'a lost reservation is no start');
      const [, kept] = await store.claims.claimRuns({ workerId: 'w', limit: 2, reserve: 1, leaseMs: 10_000 });
      assert.equal(await store.claims.releaseRuns([leaseOf(kept!)]), 1);
      assert.deepEqual(runsOf(await member(set.id, 1)), { status: 'WAITING', attempts: 0, starts: 0, restarts: [] }, 'a reservation given back is no start');
      const [started] = await store.claims.claimRuns({ workerId: 'w', limit: 1, reserve: 1, leaseMs: 10_000 });
      assert.ok(await store.claims.startRun(leaseOf(started!)));
      assert.equal(await store.claims.startRun(leaseOf(started!)), false, 'a RUNNING member does not start again');
      assert.deepEqual(runsOf(await member(set.id, 1)), { status: 'RUNNING', attempts: 0, starts: 1, restarts: [] });
    });

    test('a started member its worker gives back was lost by its worker: started again, the restart says so', async () => {
      const set = newSet(1);
      await store.sets.create(set);
      const [run] = await store.claims.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 10_000 });
      assert.equal(await store.claims.releaseRuns([leaseOf(run!)]), 1);
      const [again] = await store.claims.claimRuns({ workerId: 'w2', limit: 1, leaseMs: 1 });
      await sleep(20);
      assert.deepEqual(await store.claims.reapExpired(3), { requeued: 1, failed: 0 });
      const [third] = await store.claims.claimRuns({ workerId: 'w3', limit: 1, leaseMs: 10_000 });
      assert.ok(again && third);
      assert.ok(await store.claims.finishRun(leaseOf(third), { ...passed, attempts: 2 }));
      const ended = await member(set.id);
      assert.deepEqual(runsOf(ended), { status: 'SUCCESS', attempts: 2, starts: 3, restarts: ['worker lost', 'lease lost'] });
      assert.equal(passedHow(ended), 'on retry', 'a retry in its last start is flaky, restarted or not');
    });

    test('a reserved member started by finishAndClaim counts one start, and one already RUNNING none more', async () => {
      const set = newSet(3);
      await store.sets.create(set);
      const [a, b] = await store.claims.claimRuns({ workerId: 'w', limit: 2, reserve: 1, leaseMs: 10_000 });
      const step = await store.claims.finishAndClaim(leaseOf(a!), passed, { workerId: 'w', limit: 1, reserve: 1, leaseMs: 10_000, start: leaseOf(b!) });
      assert.equal(step.started, true);
      const [c] = step.claimed;
      assert.ok(await store.claims.startRun(leaseOf(c!)), 'the reserved third begins on its own');
      const again = await store.claims.finishAndClaim(leaseOf(b!), passed, { workerId: 'w', limit: 0, leaseMs: 10_000, start: leaseOf(c!) });
      assert.equal(again.finished, true);
      assert.deepEqual((await store.sets.listRuns(set.id)).map((m) => [m.status, m.starts]), [['SUCCESS', 1], ['SUCCESS', 1], ['RUNNING', 1]]);
    });

    test('a member lost too often ends FAIL having started once per lost lease, with no restart after the last', async () => {
      const set = newSet(1);
      await store.sets.create(set);
      for (const worker of ['w1', 'w2']) {
        await store.claims.claimRuns({ workerId: worker, limit: 1, leaseMs: 1 });
        await sleep(20);
        await store.claims.reapExpired(2);
      }
      assert.deepEqual(runsOf(await member(set.id)), { status: 'FAIL', attempts: 0, starts: 2, restarts: ['lease lost'] });
    });

    test('a worker that starts and gives back one member without end grows its row no further than the reasons kept; starts still counts every start', async () => {
      const set = newSet(1);
      await store.sets.create(set);
      const rounds = MAX_LOST_STARTS_KEPT + 50;
      for (let round = 0; round < rounds; round++) {
        const [run] = await store.claims.claimRuns({ workerId: 'hostile', limit: 1, leaseMs: 10_000 });
        assert.ok(run, `round ${round} claims the member`);
        assert.equal(await store.claims.releaseRuns([leaseOf(run)]), 1);
      }
      const given = await member(set.id);
      assert.equal(given.status, 'WAITING');
      assert.equal(given.starts, rounds);
      assert.equal(given.restarts?.length, MAX_LOST_STARTS_KEPT, 'the reasons stop at the cap');
      const [last] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      assert.ok(await store.claims.finishRun(leaseOf(last!), passed));
      const ended = await member(set.id);
      assert.equal(ended.starts, rounds + 1);
      assert.equal(ended.restarts?.length, MAX_LOST_STARTS_KEPT);
      assert.match(ranAgainText(ended) ?? '', new RegExp(`^passed after a lost worker, not flaky: ran ${rounds + 1} times \\(worker lost, .*, ${rounds - MAX_LOST_STARTS_KEPT} more\\)$`));
    });
  });
}
