/**
 * Store contract cases on what the first cases leave open: formats and edge
 * values of stored records, and the finer rules of leases (heartbeats,
 * releases). Called inside runStoreContract's describe, on its store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Store } from '../../src/store/store.js';
import type { NewTestRunSet, ResultCase, TestSpec } from '../../src/core/types.js';

type NewSet = (members: number) => NewTestRunSet;

const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ok = { status: 'SUCCESS' as const, attempts: 1, error: null, output: 'fine', durationMs: 5 };

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What the first cases leave open about formats and edge values. */
export function formatCases(current: () => Store, newSet: NewSet): void {
  test('timestamps are UTC ISO 8601 with milliseconds, as toISOString() writes them', async () => {
    const store = current();
    const set = newSet(2);
    await store.sets.create(set);
    const [a] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
    await store.claims.finishRun({ runId: a!.id, workerId: 'w', claim: a!.claim }, ok);
    const [b] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
    await store.claims.finishRun({ runId: b!.id, workerId: 'w', claim: b!.claim }, ok);
    const s = await store.sets.get(set.id);
    const runs = await store.sets.listRuns(set.id);
    const key = await store.keys.create({ id: randomUUID(), name: 'k', hash: 'c'.repeat(64) });
    await store.keys.touch([key.id]);
    await store.keys.revoke(key.id);
    const [listed] = await store.keys.list();
    const stamps = [
      s?.createdAt, s?.startedAt, s?.endedAt,
      ...runs.flatMap((r) => [r.startedAt, r.endedAt]),
      key.createdAt, listed?.createdAt, listed?.lastUsedAt, listed?.revokedAt,
    ];
    for (const stamp of stamps) assert.match(String(stamp), ISO_UTC_MS);
    assert.ok(runs.every((r) => r.startedAt! >= s!.startedAt! && r.endedAt! <= s!.endedAt!));
  });

  test("a result's cases (a command's JUnit report) come back with its member, in order; a member without any reads none", async () => {
    const store = current();
    const set = newSet(3);
    await store.sets.create(set);
    const cases: ResultCase[] = [
      { name: 'api.Users › creates a user', status: 'passed', durationMs: 12, error: null },
      { name: 'api.Users › rejects a duplicate', status: 'failed', durationMs: 7, error: 'expected 409, got 200' },
      { name: 'api.Users › é skipped', status: 'skipped', durationMs: 0, error: null },
    ];
    const [a] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
    assert.ok(await store.claims.finishRun({ runId: a!.id, workerId: 'w', claim: a!.claim }, { ...ok, status: 'FAIL', error: 'exit 1', cases }));
    const [b] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
    const next = await store.claims.finishAndClaim({ runId: b!.id, workerId: 'w', claim: b!.claim }, { ...ok, cases: cases.slice(0, 1) }, { workerId: 'w', limit: 1, leaseMs: 10_000 });
    assert.ok(next.finished);
    const [c] = next.claimed;
    assert.ok(await store.claims.finishRun({ runId: c!.id, workerId: 'w', claim: c!.claim }, ok));
    const byId = new Map((await store.sets.listRuns(set.id)).map((r) => [r.id, r]));
    assert.deepEqual(byId.get(a!.id)?.cases, cases);
    assert.deepEqual(byId.get(b!.id)?.cases, cases.slice(0, 1));
    assert.deepEqual(byId.get(c!.id)?.cases, []);
  });

  test('specs and variables come back exactly as stored, key order included', async () => {
    const store = current();
    const set = newSet(1);
    const http: TestSpec = {
      name: 'post',
      type: 'http',
      request: { method: 'POST', url: '{{BASE_URL}}/x', headers: { 'x-b': '1', 'x-a': '2' }, body: { zeta: 1, alpha: { b: [1, 2.5], a: null }, k: 'é' } },
      expect: { status: 201, json: { ok: true } },
      tags: ['smoke'],
      timeoutSeconds: 5,
      retries: 1,
    };
    set.runs[0]!.spec = http;
    set.variables = { ZED: { kind: 'plain', value: 'z' }, API: { kind: 'env', name: 'TOKEN' }, BASE_URL: { kind: 'plain', value: 'http://x' } };
    await store.sets.create(set);
    const [claimed] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
    assert.equal(JSON.stringify(claimed!.spec), JSON.stringify(http));
    assert.equal(JSON.stringify(claimed!.variables), JSON.stringify(set.variables));
    assert.equal(claimed!.workerId, 'w');
    assert.equal((await store.sets.listRuns(set.id))[0]?.type, 'http');
  });

  test('unknown or malformed ids are simply not found; nothing waiting claims nothing', async () => {
    const store = current();
    assert.equal(await store.sets.get('not-a-uuid'), undefined);
    assert.deepEqual(await store.sets.listRuns(randomUUID()), []);
    assert.deepEqual(await store.claims.claimRuns({ workerId: 'w', limit: 5, leaseMs: 1000 }), []);
    assert.deepEqual(await store.claims.reapExpired(3), { requeued: 0, failed: 0 });
    assert.equal(await store.claims.releaseRuns([]), 0);
    await store.keys.touch([]);
    const set = newSet(1);
    await store.sets.create(set);
    const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 5, leaseMs: 1000 });
    await store.claims.finishRun({ runId: run!.id, workerId: 'w', claim: run!.claim }, { ...ok, durationMs: 7.6 });
    assert.deepEqual(await store.claims.claimRuns({ workerId: 'w', limit: 5, leaseMs: 1000 }), [], 'an ended member is never claimed again');
    assert.equal((await store.sets.listRuns(set.id))[0]?.durationMs, 8, 'durations are stored as whole milliseconds');
  });

  test('revoking twice keeps the first revocation time', async () => {
    const store = current();
    const id = randomUUID();
    await store.keys.create({ id, name: 'ci', hash: 'd'.repeat(64) });
    assert.equal(await store.keys.revoke(id), true);
    const once = (await store.keys.list())[0]?.revokedAt;
    await sleep(5);
    assert.equal(await store.keys.revoke(id), true);
    assert.equal((await store.keys.list())[0]?.revokedAt, once);
  });
}

/** What the first cases leave open about heartbeats and releases. */
export function leaseCases(current: () => Store, newSet: NewSet): void {
  test('a heartbeat extends the lease by the store clock and records attempts', async () => {
    const store = current();
    const set = newSet(1);
    await store.sets.create(set);
    const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 40 });
    assert.ok(await store.claims.heartbeat({ runId: run!.id, workerId: 'w', claim: run!.claim }, 60_000, 2));
    await sleep(80);
    assert.deepEqual(await store.claims.reapExpired(1), { requeued: 0, failed: 0 });
    const [listed] = await store.sets.listRuns(set.id);
    assert.equal(listed?.status, 'RUNNING');
    assert.equal(listed?.attempts, 2);
  });

  test('releasing is fenced, spends no lost lease, and keeps the first start', async () => {
    const store = current();
    const set = newSet(1);
    await store.sets.create(set);
    const [first] = await store.claims.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 60_000 });
    const startedAt = (await store.sets.listRuns(set.id))[0]?.startedAt;
    assert.equal(await store.claims.releaseRuns([{ runId: first!.id, workerId: 'w2', claim: first!.claim }]), 0);
    assert.equal(await store.claims.releaseRuns([{ runId: first!.id, workerId: 'w1', claim: first!.claim - 1 }]), 0);
    assert.equal(await store.claims.releaseRuns([{ runId: first!.id, workerId: 'w1', claim: first!.claim }]), 1);
    assert.equal(await store.claims.releaseRuns([{ runId: first!.id, workerId: 'w1', claim: first!.claim }]), 0, 'no second release');
    assert.equal(await store.claims.heartbeat({ runId: first!.id, workerId: 'w1', claim: first!.claim }, 1000, 1), false);

    const [second] = await store.claims.claimRuns({ workerId: 'w2', limit: 1, leaseMs: 1 });
    assert.equal(second!.claim, first!.claim + 1);
    await sleep(20);
    assert.deepEqual(await store.claims.reapExpired(2), { requeued: 1, failed: 0 }, 'the release was not a lost lease');
    const [third] = await store.claims.claimRuns({ workerId: 'w3', limit: 1, leaseMs: 1 });
    await sleep(20);
    assert.deepEqual(await store.claims.reapExpired(2), { requeued: 0, failed: 1 });
    assert.equal(await store.claims.heartbeat({ runId: third!.id, workerId: 'w3', claim: third!.claim }, 1000, 1), false);
    const [run] = await store.sets.listRuns(set.id);
    assert.equal(run?.startedAt, startedAt, 'a member keeps its first start');
    assert.ok(run?.endedAt);
    const s = await store.sets.get(set.id);
    assert.equal(s?.status, 'FAIL');
    assert.deepEqual(s?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 1 });
    assert.ok(s?.endedAt);
  });
}

