/**
 * The Store contract: one suite, run against every backend (sqlite.test.ts,
 * postgres.test.ts). A backend is correct when it passes all of it.
 */
import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Store } from '../../src/store/store.js';
import { WORKER_LOST } from '../../src/store/store.js';
import type { NewTestRunSet, TestSpec } from '../../src/core/types.js';

export type StoreFactory = () => Promise<Store>;

function spec(name: string): TestSpec {
  return { name, type: 'command', run: ['true'], cwd: '/', tags: [], timeoutSeconds: 5, retries: 0 };
}

export function newSet(members: number, env = 'staging'): NewTestRunSet {
  return {
    id: randomUUID(),
    env,
    variables: { BASE_URL: { kind: 'plain', value: 'http://x' } },
    overrides: {},
    keyId: null,
    createdAt: new Date().toISOString(),
    runs: Array.from({ length: members }, (_, i) => ({ id: randomUUID(), position: i, spec: spec(`t${i}`) })),
  };
}

const ok = { status: 'SUCCESS' as const, attempts: 1, error: null, output: 'fine', durationMs: 5 };
const bad = { status: 'FAIL' as const, attempts: 2, error: 'exited with code 1', output: 'boom', durationMs: 7 };

export function runStoreContract(name: string, makeStore: StoreFactory): void {
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
      await store.createSet(set);
      const got = await store.getSet(set.id);
      assert.deepEqual(got, {
        id: set.id,
        env: 'staging',
        status: 'WAITING',
        counts: { WAITING: 3, RUNNING: 0, SUCCESS: 0, FAIL: 0 },
        createdAt: set.createdAt,
        startedAt: null,
        endedAt: null,
      });
      const runs = await store.listRuns(set.id);
      assert.deepEqual(runs.map((r) => [r.name, r.status, r.attempts]), [['t0', 'WAITING', 0], ['t1', 'WAITING', 0], ['t2', 'WAITING', 0]]);
      assert.equal(await store.getSet(randomUUID()), undefined);
    });

    test('claims move members to RUNNING, oldest set first, and the set with them', async () => {
      const first = newSet(2);
      const second = newSet(2);
      await store.createSet(first);
      await store.createSet(second);
      const claimed = await store.claimRuns({ workerId: 'w1', limit: 3, leaseMs: 10_000 });
      assert.equal(claimed.length, 3);
      assert.deepEqual(claimed.map((c) => c.setId), [first.id, first.id, second.id]);
      assert.equal(claimed[0]!.spec.name, 't0');
      assert.deepEqual(claimed[0]!.variables, first.variables);
      const s1 = await store.getSet(first.id);
      assert.equal(s1?.status, 'RUNNING');
      assert.deepEqual(s1?.counts, { WAITING: 0, RUNNING: 2, SUCCESS: 0, FAIL: 0 });
      assert.ok(s1?.startedAt);
      assert.equal(s1?.endedAt, null);
    });

    test('finishing every member ends the set: SUCCESS only when all passed', async () => {
      const set = newSet(2);
      await store.createSet(set);
      const [a, b] = await store.claimRuns({ workerId: 'w', limit: 2, leaseMs: 10_000 });
      assert.ok(await store.finishRun({ runId: a!.id, workerId: 'w', claim: a!.claim }, ok));
      let s = await store.getSet(set.id);
      assert.equal(s?.status, 'RUNNING');
      assert.equal(s?.endedAt, null);
      assert.ok(await store.finishRun({ runId: b!.id, workerId: 'w', claim: b!.claim }, bad));
      s = await store.getSet(set.id);
      assert.equal(s?.status, 'FAIL');
      assert.deepEqual(s?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 1 });
      assert.ok(s?.endedAt && s.startedAt && s.endedAt >= s.startedAt);
      const runs = await store.listRuns(set.id);
      const failed = runs.find((r) => r.id === b!.id);
      assert.equal(failed?.error, 'exited with code 1');
      assert.equal(failed?.output, 'boom');
      assert.equal(failed?.attempts, 2);
      assert.equal(failed?.durationMs, 7);
      assert.ok(failed?.endedAt);

      const good = newSet(1);
      await store.createSet(good);
      const [c] = await store.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      await store.finishRun({ runId: c!.id, workerId: 'w', claim: c!.claim }, ok);
      assert.equal((await store.getSet(good.id))?.status, 'SUCCESS');
    });

    test('a stale lease changes nothing: wrong worker or old claim', async () => {
      const set = newSet(1);
      await store.createSet(set);
      const [run] = await store.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 10_000 });
      assert.equal(await store.finishRun({ runId: run!.id, workerId: 'other', claim: run!.claim }, ok), false);
      assert.equal(await store.finishRun({ runId: run!.id, workerId: 'w1', claim: run!.claim + 1 }, ok), false);
      assert.equal(await store.heartbeat({ runId: run!.id, workerId: 'other', claim: run!.claim }, 1000, 1), false);
      assert.equal((await store.getSet(set.id))?.counts.RUNNING, 1);
      assert.equal(await store.heartbeat({ runId: run!.id, workerId: 'w1', claim: run!.claim }, 1000, 1), true);
      assert.ok(await store.finishRun({ runId: run!.id, workerId: 'w1', claim: run!.claim }, ok));
      assert.equal(await store.finishRun({ runId: run!.id, workerId: 'w1', claim: run!.claim }, bad), false, 'no second finish');
      assert.equal((await store.getSet(set.id))?.status, 'SUCCESS');
    });

    test('concurrent claimers each get a member exactly once', async () => {
      const set = newSet(60);
      await store.createSet(set);
      const batches = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.claimRuns({ workerId: `w${i}`, limit: 10, leaseMs: 10_000 })),
      );
      const ids = batches.flat().map((c) => c.id);
      assert.equal(ids.length, 60);
      assert.equal(new Set(ids).size, 60);
      assert.deepEqual((await store.getSet(set.id))?.counts, { WAITING: 0, RUNNING: 60, SUCCESS: 0, FAIL: 0 });
    });

    test('an expired lease is requeued, fences the old worker, and fails after the limit', async () => {
      const set = newSet(1);
      await store.createSet(set);
      const [first] = await store.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 1 });
      await sleep(20);
      assert.deepEqual(await store.reapExpired(2), { requeued: 1, failed: 0 });
      let s = await store.getSet(set.id);
      assert.equal(s?.status, 'RUNNING', 'a set never moves backwards');
      assert.ok(s?.startedAt);
      assert.equal(s?.counts.WAITING, 1);
      assert.equal(await store.finishRun({ runId: first!.id, workerId: 'w1', claim: first!.claim }, ok), false);

      const [second] = await store.claimRuns({ workerId: 'w2', limit: 1, leaseMs: 1 });
      assert.ok(second!.claim > first!.claim);
      await sleep(20);
      assert.deepEqual(await store.reapExpired(2), { requeued: 0, failed: 1 });
      s = await store.getSet(set.id);
      assert.equal(s?.status, 'FAIL');
      const [run] = await store.listRuns(set.id);
      assert.equal(run?.error, WORKER_LOST);
      assert.equal(await store.finishRun({ runId: second!.id, workerId: 'w2', claim: second!.claim }, ok), false);
    });

    test('a live lease is not reaped; released members go back to WAITING', async () => {
      const set = newSet(2);
      await store.createSet(set);
      const claimed = await store.claimRuns({ workerId: 'w', limit: 2, leaseMs: 60_000 });
      assert.deepEqual(await store.reapExpired(3), { requeued: 0, failed: 0 });
      const woke = new Promise<void>((resolve) => {
        const off = store.onRunsWaiting(() => {
          off();
          resolve();
        });
      });
      assert.equal(await store.releaseRuns(claimed.map((c) => ({ runId: c.id, workerId: 'w', claim: c.claim }))), 2);
      await woke;
      const s = await store.getSet(set.id);
      assert.equal(s?.status, 'RUNNING');
      assert.equal(s?.counts.WAITING, 2);
      assert.equal((await store.claimRuns({ workerId: 'w3', limit: 5, leaseMs: 1000 })).length, 2);
    });

    test('wake-ups reach subscribers', async () => {
      let calls = 0;
      const off = store.onRunsWaiting(() => calls++);
      await store.notifyRunsWaiting();
      await waitFor(() => calls > 0);
      off();
    });

    test('keys: create, find by hash, touch, list, revoke', async () => {
      const id = randomUUID();
      const created = await store.createKey({ id, name: 'ci', hash: 'a'.repeat(64) });
      assert.equal(created.revokedAt, null);
      assert.equal((await store.findActiveKeyByHash('a'.repeat(64)))?.id, id);
      assert.equal(await store.findActiveKeyByHash('b'.repeat(64)), undefined);
      await store.touchKeys([id]);
      const [listed] = await store.listKeys();
      assert.equal(listed?.name, 'ci');
      assert.ok(listed?.lastUsedAt);
      assert.equal(await store.revokeKey(id), true);
      assert.equal(await store.revokeKey(randomUUID()), false);
      assert.equal(await store.findActiveKeyByHash('a'.repeat(64)), undefined);
      assert.ok((await store.listKeys())[0]?.revokedAt);
    });
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
