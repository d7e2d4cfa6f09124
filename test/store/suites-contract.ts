/**
 * The suites sub-store's contract (src/store/suites.ts), run on every backend
 * through runStoreContract: versions stored once, found by id or name, names
 * that move, the list with names and set counts, sets that name a version and
 * the claims that carry it, and removal of versions nothing uses.
 */
import { describe, test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NewTestRunSet, TestSpec } from '../../src/core/types.js';
import type { NewSuiteVersion, Store } from '../../src/store/store.js';
import { caseSpec } from './batch-contract.js';

const ok = { status: 'SUCCESS' as const, attempts: 1, error: null, output: 'fine', durationMs: 5 };
const LATER = new Date(Date.now() + 3_600_000);

/** A version whose id is the hash of some fresh bytes, as an upload's is. */
export function newVersion(extra: Partial<NewSuiteVersion> = {}): NewSuiteVersion {
  const id = createHash('sha256').update(randomUUID()).digest('hex');
  const tests: TestSpec[] = [{ name: 'marker', type: 'command', run: ['node', 'marker.js'], cwd: '/runset-suite', tags: [], timeoutSeconds: 5, retries: 0 }];
  return { id, size: 1234, files: 3, commit: 'abc123', tests, location: `file:${id.slice(0, 2)}/${id}`, ...extra };
}

export function runSuitesContract(name: string, makeStore: () => Promise<Store>, newSet: (members: number) => NewTestRunSet): void {
  describe(`Suites contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    test('a version is stored once: the same id again changes nothing', async () => {
      const v = newVersion();
      assert.deepEqual(await store.suiteVersions.put(v), { created: true });
      assert.deepEqual(await store.suiteVersions.put({ ...v, commit: 'other', size: 1 }), { created: false });
      const got = await store.suiteVersions.get(v.id);
      assert.ok(got);
      assert.equal(Number.isNaN(Date.parse(got.createdAt)), false);
      assert.deepEqual({ ...got, createdAt: '' }, {
        id: v.id, size: 1234, files: 3, createdAt: '', commit: 'abc123', names: [], sets: 0, lastSetAt: null, location: v.location,
      });
      assert.deepEqual(await store.suiteVersions.tests(v.id), v.tests);
      assert.equal(await store.suiteVersions.get(newVersion().id), undefined);
      assert.equal(await store.suiteVersions.tests(newVersion().id), undefined);
    });

    test('ranIn: a version ran in the environments of the sets that name it, and in no other', async () => {
      const v = newVersion();
      await store.suiteVersions.put(v);
      const set: NewTestRunSet = { ...newSet(1), suiteVersion: v.id };
      assert.equal(await store.suiteVersions.ranIn(v.id, [set.env]), false, 'no set names it yet');
      await store.sets.create(set);
      assert.equal(await store.suiteVersions.ranIn(v.id, [set.env]), true);
      assert.equal(await store.suiteVersions.ranIn(v.id, ['elsewhere', set.env]), true);
      assert.equal(await store.suiteVersions.ranIn(v.id, ['elsewhere']), false);
      assert.equal(await store.suiteVersions.ranIn(v.id, []), false);
      assert.equal(await store.suiteVersions.ranIn(newVersion().id, [set.env]), false);
    });

    test('a version is found by its id or a name; a name moves from one version to another', async () => {
      const [a, b] = [newVersion({ commit: null }), newVersion()];
      await store.suiteVersions.put(a);
      await store.suiteVersions.put(b);
      assert.equal(await store.suiteVersions.resolve(a.id), a.id);
      assert.equal(await store.suiteVersions.resolve('main'), undefined);
      await store.suiteVersions.setName('main', a.id);
      await store.suiteVersions.setName('release/2.4', a.id);
      assert.equal(await store.suiteVersions.resolve('main'), a.id);
      assert.deepEqual((await store.suiteVersions.get(a.id))?.names, ['main', 'release/2.4']);
      await store.suiteVersions.setName('main', b.id);
      assert.equal(await store.suiteVersions.resolve('main'), b.id);
      assert.deepEqual((await store.suiteVersions.get(a.id))?.names, ['release/2.4']);
      assert.deepEqual((await store.suiteVersions.get(b.id))?.names, ['main']);
      assert.equal((await store.suiteVersions.get(a.id))?.commit, null);
      // An unknown id is named nowhere, and cannot be named.
      const unknown = newVersion().id;
      assert.equal(await store.suiteVersions.resolve(unknown), undefined);
      await assert.rejects(store.suiteVersions.setName('pr-1', unknown), /no suite version/);
      assert.equal(await store.suiteVersions.resolve('pr-1'), undefined);
    });

    test('a set records its version, every claim carries it (its members reserved until their tests begin), and a set without one claims as before', async () => {
      const v = newVersion();
      await store.suiteVersions.put(v);
      const plain = newSet(1);
      const withSuite: NewTestRunSet = { ...newSet(2), suiteVersion: v.id };
      const batched: NewTestRunSet = { ...newSet(0), suiteVersion: v.id };
      batched.runs = ['one', 'two', 'three'].map((title, position) => ({ id: randomUUID(), position, spec: caseSpec(title), expectedMs: 1000, quarantined: false, failOnFlaky: false }));
      for (const set of [plain, withSuite, batched]) await store.sets.create(set);
      assert.equal((await store.setViews.asked(withSuite.id))?.suiteVersion, v.id);
      assert.equal((await store.setViews.asked(plain.id))?.suiteVersion, null);

      const [first, second] = await store.claims.claimRuns({ workerId: 'w', limit: 2, leaseMs: 10_000 });
      assert.equal(first?.setId, plain.id);
      assert.equal(first?.suiteVersion ?? null, null, 'the server\'s own tests: no version');
      assert.equal(second?.setId, withSuite.id);
      assert.equal(second?.suiteVersion, v.id);
      // The plain set's member started at its claim; the version's is reserved: it waits while its worker prepares the version.
      assert.equal((await store.sets.get(plain.id))?.status, 'RUNNING');
      const waiting = await store.sets.get(withSuite.id);
      assert.deepEqual([waiting?.status, waiting?.startedAt ?? null, waiting?.counts.RUNNING], ['WAITING', null, 0], 'a member of a version is not RUNNING while it is prepared');
      assert.deepEqual(await store.setViews.held(withSuite.id), [{ workerId: 'w', members: 1 }], 'the worker holds it: it is preparing it');
      assert.deepEqual(await store.setViews.held(plain.id), [], 'a started member is not held');
      assert.equal(await store.claims.startRun({ runId: second.id, workerId: 'w', claim: second.claim }), true, 'its test began: it starts under its lease');
      assert.deepEqual(await store.setViews.held(withSuite.id), []);
      const started = await store.sets.get(withSuite.id);
      assert.deepEqual([started?.status, started?.counts.RUNNING], ['RUNNING', 1]);
      assert.ok(started?.startedAt);
      const step = await store.claims.finishAndClaim({ runId: second.id, workerId: 'w', claim: second.claim }, ok, { workerId: 'w', limit: 2, leaseMs: 10_000 });
      assert.deepEqual(step.claimed.map((c) => [c.setId, c.suiteVersion]), [[withSuite.id, v.id], [batched.id, v.id]]);
      const head = step.claimed[1]!;
      assert.ok(head.batchKey);
      const rest = await store.claims.claimBatch({ workerId: 'w', setId: batched.id, batchKey: head.batchKey, limit: 5, leaseMs: 10_000 });
      assert.deepEqual(rest.map((c) => c.suiteVersion), [v.id, v.id]);
    });

    test('the list: newest first, with names, set counts and the latest set', async () => {
      const old = newVersion();
      await store.suiteVersions.put(old);
      await sleep(5);
      const used = newVersion();
      await store.suiteVersions.put(used);
      await store.suiteVersions.setName('main', used.id);
      const sets = [{ ...newSet(1), suiteVersion: used.id }, { ...newSet(1), suiteVersion: used.id }];
      sets[1]!.createdAt = new Date(Date.parse(sets[0]!.createdAt) + 1000).toISOString();
      for (const set of sets) await store.sets.create(set);
      const list = await store.suiteVersions.list();
      assert.deepEqual(list.map((v) => [v.id, v.names, v.sets, v.lastSetAt]), [
        [used.id, ['main'], 2, sets[1]!.createdAt],
        [old.id, [], 0, null],
      ]);
      assert.equal('location' in list[0]!, false, 'the list shows no storage location');
      assert.equal((await store.suiteVersions.get(used.id))?.sets, 2);
    });

    test('removeUnused takes versions no set and no name uses, created before the cut-off, and answers their locations', async () => {
      const [unused, named, used, fresh] = [newVersion(), newVersion(), newVersion(), newVersion()];
      for (const v of [unused, named, used]) await store.suiteVersions.put(v);
      await store.suiteVersions.setName('main', named.id);
      await store.sets.create({ ...newSet(1), suiteVersion: used.id });
      const past = new Date(Date.now() - 3_600_000);
      assert.deepEqual(await store.suiteVersions.removeUnused(past), [], 'none was created before the cut-off');
      await sleep(5);
      const cutoff = new Date();
      await sleep(5);
      await store.suiteVersions.put(fresh);
      assert.deepEqual(await store.suiteVersions.removeUnused(cutoff), [{ id: unused.id, location: unused.location }]);
      assert.equal(await store.suiteVersions.get(unused.id), undefined);
      assert.deepEqual((await store.suiteVersions.list()).map((v) => v.id).sort(), [named.id, used.id, fresh.id].sort());
      // Once the name moves away, the version it pointed at is unused too.
      await store.suiteVersions.setName('main', fresh.id);
      assert.deepEqual((await store.suiteVersions.removeUnused(LATER)).map((r) => r.id), [named.id]);
    });
  });
}
