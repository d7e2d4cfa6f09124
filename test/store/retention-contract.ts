/**
 * Store contract for set retention (Store.retention): exactly the sets that
 * ended before the limit go, with every record keyed by them; sets still
 * WAITING or RUNNING stay whatever their age; batches take the oldest end
 * first; counting removes nothing; an Idempotency-Key whose set is gone starts
 * a fresh set; the duration history stays; what is due is counted from the
 * ended-time index with its oldest end; a new store takes the default retention
 * when serve is given none. Run for every backend by retention.test.ts.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NewArtifact, NewTestRunSet } from '../../src/core/types.js';
import { leaseOf, type IdempotencyClaim, type Store } from '../../src/store/store.js';
import { newSet } from './fixtures.js';

/** Rows each per-set table holds for a set (webhook_attempts: in the whole store, as they name deliveries). */
export type PerSetRows = (store: Store, setId: string) => Promise<Record<string, number>>;

const PER_SET_TABLES = ['test_run_sets', 'test_runs', 'artifacts', 'idempotency_keys', 'set_events', 'webhook_deliveries'] as const;
const passed = { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 40 };
const FAR_FUTURE = '2999-01-01T00:00:00.000Z';

function idem(key: string): IdempotencyClaim {
  return { keyId: 'key-1', key, bodyHash: 'h', ttlMs: 86_400_000 };
}

function artifact(bytes: number): NewArtifact {
  const id = randomUUID();
  return { id, name: 'trace.zip', contentType: 'application/zip', size: bytes, location: `test:${id}` };
}

/** Creates the set, runs every member to SUCCESS (the first with `artifacts`), and returns its end time. */
async function runToEnd(store: Store, set: NewTestRunSet, opts: { key?: string; artifacts?: NewArtifact[] } = {}): Promise<string> {
  if (opts.key) assert.ok((await store.sets.createOnce(set, idem(opts.key))).created);
  else await store.sets.create(set);
  const claimed = await store.claims.claimRuns({ workerId: 'w', limit: set.runs.length, leaseMs: 10_000 });
  assert.deepEqual(new Set(claimed.map((c) => c.setId)), new Set([set.id]), 'the set is the only one waiting');
  for (const [i, run] of claimed.entries()) {
    assert.ok(await store.claims.finishRun(leaseOf(run), { ...passed, artifacts: i === 0 ? opts.artifacts : undefined }));
  }
  const ended = await store.sets.get(set.id);
  assert.ok(ended?.endedAt);
  return ended.endedAt;
}

/** A set created long ago that is still WAITING (claimed: 0) or RUNNING. */
async function oldUnfinished(store: Store, claimed: number): Promise<NewTestRunSet> {
  const set = { ...newSet(3), createdAt: '2001-01-01T00:00:00.000Z' };
  await store.sets.create(set);
  if (claimed > 0) assert.equal((await store.claims.claimRuns({ workerId: 'w', limit: claimed, leaseMs: 60_000 })).length, claimed);
  return set;
}

export function runRetentionContract(name: string, makeStore: () => Promise<Store>, perSetRows: PerSetRows): void {
  describe(`Store contract: ${name}: set retention`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    const rowsOf = async (setId: string) => {
      const rows = await perSetRows(store, setId);
      return Object.fromEntries(PER_SET_TABLES.map((t) => [t, rows[t]]));
    };
    const none = Object.fromEntries(PER_SET_TABLES.map((t) => [t, 0]));

    test('removes exactly the sets that ended before the limit, with every record keyed by them', async () => {
      // old: delivered webhook (a delivery and its attempt), an artifact, an Idempotency-Key.
      const old = newSet(3);
      const trace = artifact(1234);
      await runToEnd(store, old, { key: 'old', artifacts: [trace] });
      assert.equal(await store.webhooks.fanOut(() => ['hook'], 10), 2);
      const [delivery] = await store.webhooks.claimDue(10, 10_000);
      assert.ok(delivery && (await store.webhooks.recordAttempt(delivery, { delivered: true, statusCode: 204, error: null, durationMs: 3, retryInMs: null, body: '{}' })));
      // oldQuiet: its set events are still in the outbox.
      const oldQuiet = newSet(2);
      const oldQuietEnd = await runToEnd(store, oldQuiet);
      await sleep(15);
      const recent = newSet(2);
      const limit = await runToEnd(store, recent, { key: 'recent', artifacts: [artifact(10)] });
      const running = await oldUnfinished(store, 1);
      const waiting = await oldUnfinished(store, 0);
      const before = { recent: await rowsOf(recent.id), waiting: await rowsOf(waiting.id), running: await rowsOf(running.id) };
      assert.deepEqual((await rowsOf(old.id)), { test_run_sets: 1, test_runs: 3, artifacts: 1, idempotency_keys: 1, set_events: 0, webhook_deliveries: 2 });
      assert.equal((await rowsOf(oldQuiet.id)).set_events, 2);

      const removed = await store.retention.removeEndedBefore(limit, 100);
      assert.deepEqual(removed, { sets: 2, members: 5, artifacts: 1, artifactBytes: 1234, artifactLocations: [trace.location], lastEndedAt: oldQuietEnd });

      for (const set of [old, oldQuiet]) {
        assert.equal(await store.sets.get(set.id), undefined);
        assert.deepEqual(await store.sets.listRuns(set.id), []);
        assert.deepEqual(await store.artifacts.list(set.id), []);
        assert.deepEqual(await store.webhooks.listDeliveries(set.id), []);
        assert.deepEqual(await rowsOf(set.id), none);
      }
      assert.equal((await perSetRows(store, old.id)).webhook_attempts, 0, 'the delivery attempt went with its delivery');
      assert.equal(await store.sets.findCreatedOnce('key-1', 'old'), undefined);
      // Untouched: the set that ended after the limit, and unfinished ones however old.
      assert.deepEqual({ recent: await rowsOf(recent.id), waiting: await rowsOf(waiting.id), running: await rowsOf(running.id) }, before);
      assert.equal((await store.sets.get(running.id))?.status, 'RUNNING');
      assert.equal((await store.sets.get(waiting.id))?.status, 'WAITING');
      assert.equal((await store.sets.findCreatedOnce('key-1', 'recent'))?.setId, recent.id);

      // Any limit, however late, leaves unfinished sets alone.
      const rest = await store.retention.removeEndedBefore(FAR_FUTURE, 100);
      assert.deepEqual([rest.sets, rest.members, rest.artifacts, rest.artifactBytes], [1, 2, 1, 10]);
      assert.equal(await store.sets.get(recent.id), undefined);
      assert.deepEqual({ waiting: await rowsOf(waiting.id), running: await rowsOf(running.id) }, { waiting: before.waiting, running: before.running });
    });

    test('batches take at most `limit` sets, oldest end first', async () => {
      const sets: NewTestRunSet[] = [];
      for (let i = 0; i < 5; i++) {
        sets.push(newSet(2));
        await runToEnd(store, sets[i]!);
        await sleep(3);
      }
      const taken: number[] = [];
      for (let round = 0; round < 4; round++) {
        const removed = await store.retention.removeEndedBefore(FAR_FUTURE, 2);
        taken.push(removed.sets);
        assert.equal(removed.members, removed.sets * 2);
        const left = (await Promise.all(sets.map((s) => store.sets.get(s.id)))).map((s) => s !== undefined);
        const gone = taken.reduce((a, b) => a + b, 0);
        assert.deepEqual(left, sets.map((_, i) => i >= gone), 'the oldest ends go first');
      }
      assert.deepEqual(taken, [2, 2, 1, 0]);
    });

    test('a batch can start from where the last one ended: earlier ends are not searched', async () => {
      const ends: string[] = [];
      const sets = [newSet(1), newSet(1), newSet(1)];
      for (const set of sets) {
        ends.push(await runToEnd(store, set));
        await sleep(3);
      }
      const removed = await store.retention.removeEndedBefore(FAR_FUTURE, 10, ends[1]);
      assert.deepEqual([removed.sets, removed.lastEndedAt], [2, ends[2]]);
      assert.ok(await store.sets.get(sets[0]!.id), 'it ended before `from`: not searched');
      assert.equal((await store.retention.removeEndedBefore(FAR_FUTURE, 10, null)).lastEndedAt, ends[0]);
    });

    test('counting what would go removes nothing, and matches what then goes', async () => {
      await runToEnd(store, newSet(4), { artifacts: [artifact(100), artifact(50)] });
      await runToEnd(store, newSet(1));
      await oldUnfinished(store, 1);
      const counted = await store.retention.countEndedBefore(FAR_FUTURE);
      assert.deepEqual(counted, { sets: 2, members: 5, artifacts: 2, artifactBytes: 150 });
      assert.deepEqual(await store.retention.countEndedBefore(FAR_FUTURE), counted, 'nothing was removed');
      assert.deepEqual(await store.retention.countEndedBefore('2000-01-01T00:00:00.000Z'), { sets: 0, members: 0, artifacts: 0, artifactBytes: 0 });
      const { artifactLocations, lastEndedAt, ...removed } = await store.retention.removeEndedBefore(FAR_FUTURE, 100);
      assert.ok(lastEndedAt);
      assert.equal(artifactLocations.length, 2);
      assert.deepEqual(removed, counted);
    });

    test('an Idempotency-Key whose set was removed starts a fresh set', async () => {
      const first = newSet(1);
      await runToEnd(store, first, { key: 'ci-build-7' });
      await store.retention.removeEndedBefore(FAR_FUTURE, 100);
      assert.equal(await store.sets.findCreatedOnce('key-1', 'ci-build-7'), undefined);
      const again = newSet(1);
      assert.deepEqual(await store.sets.createOnce(again, idem('ci-build-7')), { setId: again.id, bodyHash: 'h', created: true });
      assert.equal((await store.sets.get(again.id))?.status, 'WAITING');
    });

    test('the duration history outlives the sets it came from', async () => {
      const set = newSet(2);
      await runToEnd(store, set);
      await store.durations.record([
        { env: 'staging', name: 't0', ms: 1200 },
        { env: 'staging', name: 't1', ms: 300 },
        { env: 'staging', name: 't0', ms: 1000 },
      ]);
      const history = await store.durations.history('staging');
      assert.equal((await store.retention.removeEndedBefore(FAR_FUTURE, 100)).sets, 1);
      assert.deepEqual(await store.durations.history('staging'), history);
      assert.deepEqual(history.get('t0'), [1200, 1000]);
    });

    test('what is due: the sets that ended before the limit and the oldest end, never an unfinished set', async () => {
      assert.deepEqual(await store.retention.dueBefore(FAR_FUTURE), { sets: 0, oldestEndedAt: null });
      const first = await runToEnd(store, newSet(2));
      await sleep(3);
      const second = await runToEnd(store, newSet(1));
      await oldUnfinished(store, 1);
      await oldUnfinished(store, 0);
      assert.deepEqual(await store.retention.dueBefore(FAR_FUTURE), { sets: 2, oldestEndedAt: first });
      assert.deepEqual(await store.retention.dueBefore(second), { sets: 1, oldestEndedAt: first }, 'ended before the limit only');
      assert.equal((await store.retention.countEndedBefore(FAR_FUTURE)).sets, 2, 'nothing was removed');
    });

    test('a new store takes the default retention when serve is given none', async () => {
      assert.equal(await store.retention.whenUnset(), 'default');
    });
  });
}
