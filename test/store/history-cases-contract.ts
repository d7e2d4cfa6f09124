/**
 * Store contract for the cases of members' results in test history
 * (src/core/result-cases.ts): each case that ran is a run of its own test
 * `<member> › <case>`, recorded with the member's outcome (by finishRun and by
 * finishAndClaim), listed among the member tests by name, paged with them, and
 * gone with its member. Run by runStoreContract for every backend.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { leaseOf, type Store } from '../../src/store/store.js';
import type { NewTestRunSet, ResultCase } from '../../src/core/types.js';
import { summarize } from '../../src/history/flakiness.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

const report = (second: 'passed' | 'failed'): ResultCase[] => [
  { name: 'api.Users › creates a user', status: 'passed', durationMs: 12, error: null },
  { name: 'api.Users › rejects a duplicate', status: second, durationMs: 40, error: second === 'failed' ? 'expected 409\n  at users.test.js:12' : null },
  { name: 'api.Users › is pending', status: 'skipped', durationMs: 0, error: null },
];

/** One set of one `api` member (a junit: command) ending with these cases; finishAndClaim when `viaFinishAndClaim`. */
async function recordReport(store: Store, newSet: NewSet, commit: string, cases: ResultCase[], viaFinishAndClaim = false): Promise<{ setId: string; runId: string }> {
  const base = newSet(1, 'staging');
  const set = { ...base, labels: { commit }, runs: base.runs.map((r) => ({ ...r, spec: { ...r.spec, name: 'api' } })) };
  await store.sets.create(set);
  const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 60_000 });
  const failed = cases.some((c) => c.status === 'failed');
  const outcome = { status: failed ? ('FAIL' as const) : ('SUCCESS' as const), attempts: 1, error: failed ? 'exited with code 1' : null, output: '', durationMs: 90, cases };
  if (viaFinishAndClaim) assert.ok((await store.claims.finishAndClaim(leaseOf(run!), outcome, { workerId: 'w', limit: 1, leaseMs: 60_000 })).finished);
  else assert.ok(await store.claims.finishRun(leaseOf(run!), outcome));
  await sleep(2);
  return { setId: set.id, runId: run!.id };
}

export function runHistoryCasesContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: result cases in test history`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    test('each case that ran is a test "<member> › <case>" of type junit; skipped cases have no run; flaky by the members\' rule', async () => {
      const first = await recordReport(store, newSet, 'c1', report('failed'));
      const second = await recordReport(store, newSet, 'c1', report('passed'), true);
      const page = await store.history.listTests({ env: 'staging', limit: 10, window: 50 });
      assert.deepEqual(
        page.tests.map((t) => [t.name, t.type, t.runs.length]),
        [['api', 'command', 2], ['api › api.Users › creates a user', 'junit', 2], ['api › api.Users › rejects a duplicate', 'junit', 2]],
      );
      const duplicate = page.tests[2]!;
      assert.deepEqual(duplicate.runs.map((r) => [r.testRunId, r.setId, r.result, r.attempts, r.durationMs, r.commit]), [
        [second.runId, second.setId, 'SUCCESS', 1, 40, 'c1'],
        [first.runId, first.setId, 'FAIL', 1, 40, 'c1'],
      ]);
      assert.equal(duplicate.runs[1]!.error, 'expected 409\n  at users.test.js:12');
      assert.equal(duplicate.runs[0]!.error, null);
      const figures = summarize(duplicate.runs);
      assert.equal(figures.flakyRate, 1, 'failed and passed on one commit: the pair is flaky, as for members');
      assert.deepEqual([figures.runs, figures.passRate], [2, 0.5]);
      assert.equal(summarize(page.tests[1]!.runs).flakyRate, 0);

      const history = await store.history.testRuns({ env: 'staging', name: 'api › api.Users › rejects a duplicate', limit: 1 });
      assert.deepEqual(history.runs.map((r) => [r.testRunId, r.result, r.labels]), [[second.runId, 'SUCCESS', { commit: 'c1' }]]);
      assert.ok(history.runs[0]!.startedAt, "a case's run starts when its member did");
      assert.ok(history.nextCursor);
      const older = await store.history.testRuns({ env: 'staging', name: 'api › api.Users › rejects a duplicate', limit: 1, cursor: history.nextCursor });
      assert.deepEqual(older.runs.map((r) => [r.testRunId, r.result, r.error]), [[first.runId, 'FAIL', 'expected 409\n  at users.test.js:12']]);
      assert.equal(older.nextCursor, null);
      assert.deepEqual((await store.history.testRuns({ env: 'staging', name: 'api › api.Users › is pending', limit: 5 })).runs, []);
    });

    test('case tests page and filter with member tests, by name, in byte order', async () => {
      await recordReport(store, newSet, 'c1', report('passed'));
      const names: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.history.listTests({ env: 'staging', limit: 1, window: 5, cursor });
        names.push(...page.tests.map((t) => t.name));
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined && names.length < 10);
      assert.deepEqual(names, ['api', 'api › api.Users › creates a user', 'api › api.Users › rejects a duplicate']);
      const filtered = await store.history.listTests({ env: 'staging', nameContains: 'DUPLICATE', limit: 10, window: 5 });
      assert.deepEqual(filtered.tests.map((t) => t.name), ['api › api.Users › rejects a duplicate']);
      assert.deepEqual((await store.history.listTests({ env: 'production', limit: 10, window: 5 })).tests, [], 'cases keep to their environment');
    });

    test("a set's retention takes its cases' runs with its members", async () => {
      await recordReport(store, newSet, 'c1', report('failed'));
      await sleep(5);
      const removed = await store.retention.removeEndedBefore(new Date().toISOString(), 10);
      assert.deepEqual([removed.sets, removed.members], [1, 1]);
      assert.deepEqual((await store.history.listTests({ env: 'staging', limit: 10, window: 5 })).tests, []);
    });
  });
}
