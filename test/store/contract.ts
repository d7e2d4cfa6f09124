/**
 * The Store contract: one suite, run against every backend (sqlite.test.ts,
 * postgres.test.ts). A backend is correct when it passes all of it.
 */
import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Store } from '../../src/store/store.js';
import { leaseOf, WORKER_LOST } from '../../src/store/store.js';
import type { ClaimedRun } from '../../src/core/types.js';
import { runIdempotencyContract } from './idempotency-contract.js';
import { runBrowseContract } from './browse-contract.js';
import { runFanoutContract } from './fanout-contract.js';
import { runBatchContract } from './batch-contract.js';
import { runCancelContract } from './cancel-contract.js';
import { runWatchContract } from './watch-contract.js';
import { runKeysContract } from './keys-contract.js';
import { runWebhookContract } from './webhook-contract.js';
import { runHistoryContract } from './history-contract.js';
import { runHistoryCasesContract } from './history-cases-contract.js';
import { runQueueStatsContract } from './queue-stats-contract.js';
import { runStatusPropertyContract } from './status-property-contract.js';
import { runSuitesContract } from './suites-contract.js';
import { runQuarantineContract } from './quarantine-contract.js';
import { runQueueContract } from './queue-contract.js';
import { runDeadlineContract } from './deadline-contract.js';
import { runSupersedeContract } from './supersede-contract.js';
import { runStartsContract } from './starts-contract.js';
import { formatCases, leaseCases } from './record-cases.js';
import { newSet } from './fixtures.js';

export type StoreFactory = () => Promise<Store>;

const ok = { status: 'SUCCESS' as const, attempts: 1, error: null, output: 'fine', durationMs: 5 };
const bad = { status: 'FAIL' as const, attempts: 2, error: 'exited with code 1', output: 'boom', durationMs: 7 };

export function runStoreContract(name: string, makeStore: StoreFactory): void {
  const parts = [runIdempotencyContract, runBrowseContract, runBatchContract, runFanoutContract, runCancelContract, runWatchContract, runKeysContract];
  for (const part of [...parts, runWebhookContract, runHistoryContract, runHistoryCasesContract, runQueueStatsContract, runSuitesContract, runQuarantineContract]) part(name, makeStore, newSet);
  for (const part of [runQueueContract, runDeadlineContract, runSupersedeContract, runStartsContract]) part(name, makeStore, newSet);
  runStatusPropertyContract(name, makeStore);
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    test('a new set is WAITING with every member counted, all fields present', async () => {
      const set = newSet(3);
      await store.sets.create(set);
      const got = await store.sets.get(set.id);
      assert.deepEqual(got, {
        id: set.id,
        env: 'staging',
        status: 'WAITING',
        counts: { WAITING: 3, RUNNING: 0, SUCCESS: 0, FAIL: 0 },
        failing: 0,
        createdAt: set.createdAt,
        startedAt: null,
        endedAt: null,
      });
      const runs = await store.sets.listRuns(set.id);
      assert.deepEqual(runs.map((r) => [r.name, r.status, r.attempts]), [['t0', 'WAITING', 0], ['t1', 'WAITING', 0], ['t2', 'WAITING', 0]]);
      assert.equal(await store.sets.get(randomUUID()), undefined);
    });

    test('claims move members to RUNNING, oldest set first, and the set with them', async () => {
      const first = newSet(2);
      const second = newSet(2);
      await store.sets.create(first);
      await store.sets.create(second);
      const claimed = await store.claims.claimRuns({ workerId: 'w1', limit: 3, leaseMs: 10_000 });
      assert.equal(claimed.length, 3);
      assert.deepEqual(claimed.map((c) => c.setId), [first.id, first.id, second.id]);
      assert.equal(claimed[0]!.spec.name, 't0');
      assert.deepEqual(claimed[0]!.variables, first.variables);
      const s1 = await store.sets.get(first.id);
      assert.equal(s1?.status, 'RUNNING');
      assert.deepEqual(s1?.counts, { WAITING: 0, RUNNING: 2, SUCCESS: 0, FAIL: 0 });
      assert.ok(s1?.startedAt);
      assert.equal(s1?.endedAt, null);
    });

    test('finishing every member ends the set: SUCCESS only when all passed', async () => {
      const set = newSet(2);
      await store.sets.create(set);
      const [a, b] = await store.claims.claimRuns({ workerId: 'w', limit: 2, leaseMs: 10_000 });
      assert.ok(await store.claims.finishRun({ runId: a!.id, workerId: 'w', claim: a!.claim }, ok));
      let s = await store.sets.get(set.id);
      assert.equal(s?.status, 'RUNNING');
      assert.equal(s?.endedAt, null);
      assert.ok(await store.claims.finishRun({ runId: b!.id, workerId: 'w', claim: b!.claim }, bad));
      s = await store.sets.get(set.id);
      assert.equal(s?.status, 'FAIL');
      assert.deepEqual(s?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 1 });
      assert.ok(s?.endedAt && s.startedAt && s.endedAt >= s.startedAt);
      const runs = await store.sets.listRuns(set.id);
      const failed = runs.find((r) => r.id === b!.id);
      assert.equal(failed?.error, 'exited with code 1');
      assert.equal(failed?.output, 'boom');
      assert.equal(failed?.attempts, 2);
      assert.equal(failed?.durationMs, 7);
      assert.ok(failed?.endedAt);

      const good = newSet(1);
      await store.sets.create(good);
      const [c] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      await store.claims.finishRun({ runId: c!.id, workerId: 'w', claim: c!.claim }, ok);
      assert.equal((await store.sets.get(good.id))?.status, 'SUCCESS');
    });

    test('a stale lease changes nothing: wrong worker or old claim', async () => {
      const set = newSet(1);
      await store.sets.create(set);
      const [run] = await store.claims.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 10_000 });
      assert.equal(await store.claims.finishRun({ runId: run!.id, workerId: 'other', claim: run!.claim }, ok), false);
      assert.equal(await store.claims.finishRun({ runId: run!.id, workerId: 'w1', claim: run!.claim + 1 }, ok), false);
      assert.equal(await store.claims.heartbeat({ runId: run!.id, workerId: 'other', claim: run!.claim }, 1000, 1), false);
      assert.equal((await store.sets.get(set.id))?.counts.RUNNING, 1);
      assert.equal(await store.claims.heartbeat({ runId: run!.id, workerId: 'w1', claim: run!.claim }, 1000, 1), true);
      assert.ok(await store.claims.finishRun({ runId: run!.id, workerId: 'w1', claim: run!.claim }, ok));
      assert.equal(await store.claims.finishRun({ runId: run!.id, workerId: 'w1', claim: run!.claim }, bad), false, 'no second finish');
      assert.equal((await store.sets.get(set.id))?.status, 'SUCCESS');
    });

    test('a finish repeated under its lease with the same outcome (a retry whose first try committed) is written once', async () => {
      const set = newSet(3);
      await store.sets.create(set);
      const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      const lease = leaseOf(run!);
      const artifact = { id: 'a1', name: 'trace.zip', contentType: 'application/zip', size: 3, location: 'x/a1' };
      assert.equal(await store.claims.finishRun(lease, { ...ok, artifacts: [artifact] }), true);
      assert.equal(await store.claims.finishRun(lease, { ...ok, artifacts: [artifact] }), true, 'the retry finds its own outcome');
      const again = await store.claims.finishAndClaim(lease, ok, { workerId: 'w', limit: 0, leaseMs: 10_000 });
      assert.deepEqual(again, { finished: true, started: false, claimed: [] });
      assert.equal(await store.claims.finishRun(lease, bad), false, 'another outcome is not a retry');
      assert.deepEqual((await store.sets.get(set.id))?.counts, { WAITING: 2, RUNNING: 0, SUCCESS: 1, FAIL: 0 });
      assert.deepEqual((await store.artifacts.list(set.id)).map((a) => a.id), ['a1']);

      // Failed by the reaper under the same claim: that outcome is the reaper's, not a late finish's.
      const [lost] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 1 });
      await sleep(20);
      assert.deepEqual(await store.claims.reapExpired(1), { requeued: 0, failed: 1 });
      assert.equal(await store.claims.finishRun(leaseOf(lost!), bad), false);
      assert.equal(await store.claims.finishRun(leaseOf(lost!), { ...bad, error: WORKER_LOST, attempts: 0 }), false, 'the reaper wrote no duration');
      assert.deepEqual((await store.sets.get(set.id))?.counts, { WAITING: 1, RUNNING: 0, SUCCESS: 1, FAIL: 1 });
    });

    test('finishAndClaim ends a member and claims the next in one step, moving both sets', async () => {
      const first = newSet(1);
      const second = newSet(3);
      await store.sets.create(first);
      await store.sets.create(second);
      const [a] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      const step = await store.claims.finishAndClaim(leaseOf(a!), ok, { workerId: 'w', limit: 2, leaseMs: 10_000 });
      assert.equal(step.finished, true);
      assert.deepEqual(step.claimed.map((c) => [c.setId, c.spec.name, c.workerId]), [[second.id, 't0', 'w'], [second.id, 't1', 'w']]);
      assert.deepEqual(step.claimed[0]!.variables, second.variables);
      const s1 = await store.sets.get(first.id);
      assert.equal(s1?.status, 'SUCCESS');
      assert.ok(s1?.endedAt);
      const s2 = await store.sets.get(second.id);
      assert.equal(s2?.status, 'RUNNING');
      assert.deepEqual(s2?.counts, { WAITING: 1, RUNNING: 2, SUCCESS: 0, FAIL: 0 });

      // Within one set: the finished member and the claimed one move its counts together.
      const [b, c] = step.claimed;
      const next = await store.claims.finishAndClaim(leaseOf(b!), bad, { workerId: 'w', limit: 1, leaseMs: 10_000 });
      assert.equal(next.finished, true);
      assert.deepEqual(next.claimed.map((r) => r.spec.name), ['t2']);
      assert.deepEqual((await store.sets.get(second.id))?.counts, { WAITING: 0, RUNNING: 2, SUCCESS: 0, FAIL: 1 });
      const last = await store.claims.finishAndClaim(leaseOf(c!), ok, { workerId: 'w', limit: 1, leaseMs: 10_000 });
      assert.deepEqual(last, { finished: true, started: false, claimed: [] }, 'nothing left to claim');
      await store.claims.finishRun(leaseOf(next.claimed[0]!), ok);
      const done = await store.sets.get(second.id);
      assert.equal(done?.status, 'FAIL');
      assert.deepEqual(done?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 2, FAIL: 1 });
    });

    test('finishAndClaim on a stale lease writes no outcome but still claims for the free slot', async () => {
      const set = newSet(2);
      await store.sets.create(set);
      const [run] = await store.claims.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 10_000 });
      const step = await store.claims.finishAndClaim({ ...leaseOf(run!), claim: run!.claim + 1 }, ok, { workerId: 'w1', limit: 1, leaseMs: 10_000 });
      assert.equal(step.finished, false);
      assert.deepEqual(step.claimed.map((c) => c.spec.name), ['t1']);
      const runs = await store.sets.listRuns(set.id);
      assert.deepEqual(runs.map((r) => r.status), ['RUNNING', 'RUNNING']);
      assert.deepEqual((await store.sets.get(set.id))?.counts, { WAITING: 0, RUNNING: 2, SUCCESS: 0, FAIL: 0 });
    });

    test('finishAndClaim does not start the member it finishes', async () => {
      const set = newSet(2);
      await store.sets.create(set);
      const [a] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      const step = await store.claims.finishAndClaim(leaseOf(a!), ok, { workerId: 'w', limit: 0, leaseMs: 10_000, start: leaseOf(a!) });
      assert.deepEqual(step, { finished: true, started: false, claimed: [] });
      assert.deepEqual((await store.sets.get(set.id))?.counts, { WAITING: 1, RUNNING: 0, SUCCESS: 1, FAIL: 0 });
      assert.deepEqual((await store.sets.listRuns(set.id)).map((r) => r.status), ['SUCCESS', 'WAITING']);
    });

    test('starting a reserved member renews its lease for the slot\'s leaseMs', async () => {
      const set = newSet(2);
      await store.sets.create(set);
      const [a, b] = await store.claims.claimRuns({ workerId: 'w', limit: 2, reserve: 1, leaseMs: 200 });
      const step = await store.claims.finishAndClaim(leaseOf(a!), ok, { workerId: 'w', limit: 0, leaseMs: 10_000, start: leaseOf(b!) });
      assert.equal(step.started, true);
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.deepEqual(await store.claims.reapExpired(3), { requeued: 0, failed: 0 }, 'the started member\'s lease outlived the reservation\'s');
      assert.deepEqual((await store.sets.listRuns(set.id)).map((r) => r.status), ['SUCCESS', 'RUNNING']);
    });

    /** Four slots (workers w0–w3) stepping through one set of 120 members: each member runs once, and the set ends SUCCESS. */
    async function fourSlots(slot: (workerId: string, ran: (run: ClaimedRun) => void) => Promise<void>): Promise<void> {
      const set = newSet(120);
      await store.sets.create(set);
      const seen: string[] = [];
      await Promise.all(Array.from({ length: 4 }, (_, i) => slot(`w${i}`, (run) => seen.push(run.id))));
      assert.equal(seen.length, 120);
      assert.equal(new Set(seen).size, 120);
      const s = await store.sets.get(set.id);
      assert.equal(s?.status, 'SUCCESS');
      assert.deepEqual(s?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 120, FAIL: 0 });
    }

    test('slots stepping with finishAndClaim concurrently run every member exactly once', () =>
      fourSlots(async (workerId, ran) => {
        let [run] = await store.claims.claimRuns({ workerId, limit: 1, leaseMs: 10_000 });
        while (run) {
          ran(run);
          const step = await store.claims.finishAndClaim(leaseOf(run), ok, { workerId, limit: 1, leaseMs: 10_000 });
          assert.equal(step.finished, true);
          run = step.claimed[0];
        }
      }));

    test('a claim reserves its last `reserve` members: leased, still WAITING, passed over by other claims', async () => {
      const set = newSet(4);
      await store.sets.create(set);
      const claimed = await store.claims.claimRuns({ workerId: 'w1', limit: 3, reserve: 1, leaseMs: 10_000 });
      assert.deepEqual(claimed.map((c) => c.spec.name), ['t0', 't1', 't2']);
      assert.deepEqual((await store.sets.listRuns(set.id)).map((r) => [r.status, r.startedAt !== null]), [
        ['RUNNING', true], ['RUNNING', true], ['WAITING', false], ['WAITING', false],
      ]);
      assert.deepEqual((await store.sets.get(set.id))?.counts, { WAITING: 2, RUNNING: 2, SUCCESS: 0, FAIL: 0 });
      const other = await store.claims.claimRuns({ workerId: 'w2', limit: 10, leaseMs: 10_000 });
      assert.deepEqual(other.map((c) => c.spec.name), ['t3'], 'the reserved member is not free');
      const alone = await store.claims.claimRuns({ workerId: 'w3', limit: 1, reserve: 1, leaseMs: 10_000 });
      assert.deepEqual(alone, [], 'nothing left');
    });

    test('finishAndClaim starts the member reserved for the slot and reserves the next, in one step', async () => {
      const set = newSet(3);
      await store.sets.create(set);
      const [a, b] = await store.claims.claimRuns({ workerId: 'w', limit: 2, reserve: 1, leaseMs: 10_000 });
      const step = await store.claims.finishAndClaim(leaseOf(a!), ok, { workerId: 'w', limit: 1, reserve: 1, leaseMs: 10_000, start: leaseOf(b!) });
      assert.equal(step.finished, true);
      assert.equal(step.started, true);
      assert.deepEqual(step.claimed.map((c) => c.spec.name), ['t2']);
      assert.deepEqual((await store.sets.listRuns(set.id)).map((r) => [r.status, r.startedAt !== null]), [
        ['SUCCESS', true], ['RUNNING', true], ['WAITING', false],
      ]);
      assert.deepEqual((await store.sets.get(set.id))?.counts, { WAITING: 1, RUNNING: 1, SUCCESS: 1, FAIL: 0 });

      // A retried write (its first try landed, its answer was lost): it finds its own outcome,
      // and the start holds; nothing moves.
      const retried = await store.claims.finishAndClaim(leaseOf(a!), ok, { workerId: 'w', limit: 0, leaseMs: 10_000, start: leaseOf(b!) });
      assert.deepEqual(retried, { finished: true, started: true, claimed: [] });
      // Someone else's claim, or an older one of ours, starts nothing.
      const stale = await store.claims.finishAndClaim(leaseOf(b!), ok, { workerId: 'w', limit: 0, leaseMs: 10_000, start: { ...leaseOf(step.claimed[0]!), claim: step.claimed[0]!.claim + 1 } });
      assert.deepEqual(stale, { finished: true, started: false, claimed: [] });
      assert.deepEqual((await store.sets.get(set.id))?.counts, { WAITING: 1, RUNNING: 0, SUCCESS: 2, FAIL: 0 });
      assert.equal((await store.sets.get(set.id))?.status, 'RUNNING');

      // A reservation given back is free again, with no lost lease counted.
      assert.equal(await store.claims.releaseRuns([leaseOf(step.claimed[0]!)]), 1);
      const [c] = await store.claims.claimRuns({ workerId: 'w2', limit: 1, leaseMs: 10_000 });
      assert.equal(c?.spec.name, 't2');
      await store.claims.finishRun(leaseOf(c), ok);
      assert.equal((await store.sets.get(set.id))?.status, 'SUCCESS');
    });

    test('slots that reserve their next member run every member exactly once', () =>
      fourSlots(async (workerId, ran) => {
        let [run, ahead] = await store.claims.claimRuns({ workerId, limit: 2, reserve: 1, leaseMs: 10_000 });
        while (run) {
          ran(run);
          const next = ahead
            ? { workerId, limit: 1, reserve: 1, leaseMs: 10_000, start: leaseOf(ahead) }
            : { workerId, limit: 2, reserve: 1, leaseMs: 10_000 };
          const step = await store.claims.finishAndClaim(leaseOf(run), ok, next);
          assert.equal(step.finished, true);
          if (ahead) {
            assert.equal(step.started, true);
            [run, ahead] = [ahead, step.claimed[0]];
          } else {
            [run, ahead] = step.claimed;
          }
        }
      }));

    test('concurrent claimers each get a member exactly once', async () => {
      const set = newSet(60);
      await store.sets.create(set);
      const batches = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.claims.claimRuns({ workerId: `w${i}`, limit: 10, leaseMs: 10_000 })),
      );
      const ids = batches.flat().map((c) => c.id);
      assert.equal(ids.length, 60);
      assert.equal(new Set(ids).size, 60);
      assert.deepEqual((await store.sets.get(set.id))?.counts, { WAITING: 0, RUNNING: 60, SUCCESS: 0, FAIL: 0 });
    });

    test('an expired lease is requeued, fences the old worker, and fails after the limit', async () => {
      const set = newSet(1);
      await store.sets.create(set);
      const [first] = await store.claims.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 1 });
      await sleep(20);
      assert.deepEqual(await store.claims.reapExpired(2), { requeued: 1, failed: 0 });
      let s = await store.sets.get(set.id);
      assert.equal(s?.status, 'RUNNING', 'a set never moves backwards');
      assert.ok(s?.startedAt);
      assert.equal(s?.counts.WAITING, 1);
      assert.equal(await store.claims.finishRun({ runId: first!.id, workerId: 'w1', claim: first!.claim }, ok), false);

      const [second] = await store.claims.claimRuns({ workerId: 'w2', limit: 1, leaseMs: 1 });
      assert.ok(second!.claim > first!.claim);
      await sleep(20);
      assert.deepEqual(await store.claims.reapExpired(2), { requeued: 0, failed: 1 });
      s = await store.sets.get(set.id);
      assert.equal(s?.status, 'FAIL');
      const [run] = await store.sets.listRuns(set.id);
      assert.equal(run?.error, WORKER_LOST);
      assert.equal(await store.claims.finishRun({ runId: second!.id, workerId: 'w2', claim: second!.claim }, ok), false);
    });

    test('a live lease is not reaped; released members go back to WAITING', async () => {
      const set = newSet(2);
      await store.sets.create(set);
      const claimed = await store.claims.claimRuns({ workerId: 'w', limit: 2, leaseMs: 60_000 });
      assert.deepEqual(await store.claims.reapExpired(3), { requeued: 0, failed: 0 });
      const woke = new Promise<void>((resolve) => {
        const off = store.claims.onRunsWaiting(() => {
          off();
          resolve();
        });
      });
      assert.equal(await store.claims.releaseRuns(claimed.map((c) => ({ runId: c.id, workerId: 'w', claim: c.claim }))), 2);
      await woke;
      const s = await store.sets.get(set.id);
      assert.equal(s?.status, 'RUNNING');
      assert.equal(s?.counts.WAITING, 2);
      assert.equal((await store.claims.claimRuns({ workerId: 'w3', limit: 5, leaseMs: 1000 })).length, 2);
    });

    test('wake-ups reach subscribers', async () => {
      let calls = 0;
      const off = store.claims.onRunsWaiting(() => calls++);
      await store.claims.notifyRunsWaiting();
      await waitFor(() => calls > 0);
      off();
    });

    test('keys: create, find by hash, touch, list, revoke', async () => {
      const id = randomUUID();
      const created = await store.keys.create({ id, name: 'ci', hash: 'a'.repeat(64) });
      assert.equal(created.revokedAt, null);
      assert.equal((await store.keys.findActiveByHash('a'.repeat(64)))?.id, id);
      assert.equal(await store.keys.findActiveByHash('b'.repeat(64)), undefined);
      await store.keys.touch([id]);
      const [listed] = await store.keys.list();
      assert.equal(listed?.name, 'ci');
      assert.ok(listed?.lastUsedAt);
      assert.equal(await store.keys.revoke(id), true);
      assert.equal(await store.keys.revoke(randomUUID()), false);
      assert.equal(await store.keys.findActiveByHash('a'.repeat(64)), undefined);
      assert.ok((await store.keys.list())[0]?.revokedAt);
    });

    formatCases(() => store, newSet);
    leaseCases(() => store, newSet);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await sleep(5);
  }
}
