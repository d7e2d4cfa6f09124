/**
 * Store contract for quarantine: entries added, replaced, listed per
 * environment, ended by hand or by their end time; and the status rule as a
 * set lives it: a quarantined member's failure is counted in FAIL without
 * failing its set, a cancel fails it all the same, and under failOnFlaky a
 * pass after a retry fails it. Run by runStoreContract for every backend.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NewTestRunSet } from '../../src/core/types.js';
import type { MemberRules } from '../../src/core/moves.js';
import { leaseOf, type Store } from '../../src/store/store.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
const by = { createdByKeyId: null, createdByName: 'ops' };

export function runQuarantineContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: quarantine`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    /** A set whose members have these rules, every member claimed. */
    async function claimedSet(rules: MemberRules[]) {
      const set = newSet(rules.length, `q-${name}-${Math.random().toString(36).slice(2, 8)}`);
      set.runs = set.runs.map((run, i) => ({ ...run, ...rules[i]! }));
      await store.sets.create(set);
      const claimed = await store.claims.claimRuns({ workerId: 'wq', limit: rules.length, leaseMs: 60_000, setId: set.id });
      assert.equal(claimed.length, rules.length);
      const byName = new Map(claimed.map((c) => [c.spec.name, c]));
      return { set, member: (i: number) => byName.get(`t${i}`)! };
    }

    test('entries: added, replaced, listed by environment, ended by hand; an unknown one is not removed', async () => {
      const added = await store.quarantine.put({ env: 'staging', name: 'checkout › pays', reason: 'flaky since #12', until: inDays(14), ...by });
      assert.equal(added.created, true);
      assert.equal(added.entry.reason, 'flaky since #12');
      assert.equal(added.entry.createdByName, 'ops');
      assert.ok(Date.parse(added.entry.createdAt) <= Date.now() + 1000);
      const again = await store.quarantine.put({ env: 'staging', name: 'checkout › pays', reason: 'still flaky', until: inDays(3), ...by });
      assert.equal(again.created, false, 'an entry in force is replaced');
      await store.quarantine.put({ env: 'preview', name: 'login', reason: 'r', until: inDays(1), ...by });
      assert.deepEqual((await store.quarantine.list(null)).map((e) => [e.env, e.name, e.reason]), [
        ['preview', 'login', 'r'],
        ['staging', 'checkout › pays', 'still flaky'],
      ]);
      assert.deepEqual((await store.quarantine.list(['staging'])).map((e) => e.name), ['checkout › pays']);
      assert.deepEqual([...(await store.quarantine.activeNames('staging'))], ['checkout › pays']);
      assert.equal(await store.quarantine.remove('staging', 'checkout › pays'), true);
      assert.equal(await store.quarantine.remove('staging', 'checkout › pays'), false);
      assert.equal(await store.quarantine.remove('staging', 'never quarantined'), false);
      assert.deepEqual((await store.quarantine.list(null)).map((e) => e.name), ['login']);
    });

    test('an entry ends by itself at its end time', async () => {
      await store.quarantine.put({ env: 'staging', name: 'soon over', reason: 'r', until: new Date(Date.now() + 300).toISOString(), ...by });
      assert.ok((await store.quarantine.activeNames('staging')).has('soon over'));
      await sleep(400);
      assert.equal((await store.quarantine.activeNames('staging')).has('soon over'), false);
      assert.deepEqual(await store.quarantine.list(['staging']), []);
      assert.equal(await store.quarantine.remove('staging', 'soon over'), false, 'it had already ended');
      const back = await store.quarantine.put({ env: 'staging', name: 'soon over', reason: 'again', until: inDays(1), ...by });
      assert.equal(back.created, true, 'quarantined again after its end: a new entry');
    });

    test("a quarantined member's failure is counted in FAIL and the set passes; members say which", async () => {
      const { set, member } = await claimedSet([
        { quarantined: false, failOnFlaky: false },
        { quarantined: true, failOnFlaky: false },
      ]);
      assert.ok(await store.claims.finishRun(leaseOf(member(0)), { status: 'SUCCESS', attempts: 1, error: null, output: '', durationMs: 1 }));
      assert.ok(await store.claims.finishRun(leaseOf(member(1)), { status: 'FAIL', attempts: 1, error: 'boom', output: '', durationMs: 1 }));
      const got = await store.sets.get(set.id);
      assert.deepEqual([got?.status, got?.counts, got?.failing], ['SUCCESS', { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 1 }, 0]);
      assert.deepEqual((await store.sets.listRuns(set.id)).map((r) => [r.name, r.status, r.quarantined]), [
        ['t0', 'SUCCESS', false],
        ['t1', 'FAIL', true],
      ]);
    });

    test('a cancelled set fails though every unfinished member is quarantined', async () => {
      const { set, member } = await claimedSet([
        { quarantined: false, failOnFlaky: false },
        { quarantined: true, failOnFlaky: false },
      ]);
      assert.ok(await store.claims.finishRun(leaseOf(member(0)), { status: 'SUCCESS', attempts: 1, error: null, output: '', durationMs: 1 }));
      await store.sets.cancel(set.id, { byKeyId: null, byKeyName: null, error: 'cancelled' });
      const got = await store.sets.get(set.id);
      assert.deepEqual([got?.status, got?.failing], ['FAIL', 1]);
    });

    test('failOnFlaky: a pass after a retry fails the set; a quarantined one does not', async () => {
      const flaky = await claimedSet([{ quarantined: false, failOnFlaky: true }]);
      assert.ok(await store.claims.finishRun(leaseOf(flaky.member(0)), { status: 'SUCCESS', attempts: 2, error: null, output: '', durationMs: 1 }));
      const failed = await store.sets.get(flaky.set.id);
      assert.deepEqual([failed?.status, failed?.counts.SUCCESS, failed?.failing], ['FAIL', 1, 1]);
      const excused = await claimedSet([{ quarantined: true, failOnFlaky: true }]);
      assert.ok(await store.claims.finishRun(leaseOf(excused.member(0)), { status: 'SUCCESS', attempts: 2, error: null, output: '', durationMs: 1 }));
      assert.equal((await store.sets.get(excused.set.id))?.status, 'SUCCESS');
    });
  });
}
