/**
 * Store contract for test history: crafted histories recorded through the
 * store's own moves (create, claim, finish, cancel), then read back through
 * listTests and testRuns. Run by runStoreContract for every backend.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { leaseOf, type Store } from '../../src/store/store.js';
import type { NewTestRunSet } from '../../src/core/types.js';
import { RunsetError } from '../../src/core/errors.js';
import { summarize } from '../../src/history/flakiness.js';
import type { HistoryRun } from '../../src/store/history.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

interface Outcome {
  status: 'SUCCESS' | 'FAIL';
  attempts?: number;
  durationMs?: number;
  error?: string;
}

/** One set of `env` with these labels whose members (one per name) end as given, or are all cancelled. */
interface Recorded {
  env?: string;
  labels?: Record<string, string>;
  runs?: Record<string, Outcome>;
  /** Names of members cancelled before they ran, instead of `runs`. */
  cancel?: string[];
}

/** Records sets one after the other, each ending after the one before (2 ms apart, so ended times differ). */
async function record(store: Store, newSet: NewSet, history: Recorded[]): Promise<NewTestRunSet[]> {
  const sets: NewTestRunSet[] = [];
  for (const entry of history) {
    const outcomes = entry.runs ?? {};
    const names = entry.cancel ?? Object.keys(outcomes);
    const base = newSet(names.length, entry.env ?? 'staging');
    const set = { ...base, labels: entry.labels ?? {}, runs: base.runs.map((r, i) => ({ ...r, spec: { ...r.spec, name: names[i]! } })) };
    await store.sets.create(set);
    if (entry.cancel) {
      await store.sets.cancel(set.id, { byKeyId: null, byKeyName: null, error: 'cancelled' });
    } else {
      const claimed = await store.claims.claimRuns({ workerId: 'w', limit: names.length, leaseMs: 60_000 });
      assert.equal(claimed.length, names.length);
      for (const run of claimed) {
        const o = outcomes[run.spec.name]!;
        const error = o.error ?? (o.status === 'FAIL' ? 'exited with code 1' : null);
        assert.ok(await store.claims.finishRun(leaseOf(run), { status: o.status, attempts: o.attempts ?? 1, error, output: '', durationMs: o.durationMs ?? 100 }));
      }
    }
    sets.push(set);
    await sleep(2);
  }
  return sets;
}

const pass = (durationMs = 100, attempts = 1): Outcome => ({ status: 'SUCCESS', durationMs, attempts });
const fail = (error = 'exited with code 1', durationMs = 100): Outcome => ({ status: 'FAIL', error, durationMs });

async function allRuns(store: Store, env: string, name: string, limit: number): Promise<HistoryRun[][]> {
  const pages: HistoryRun[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.history.testRuns({ env, name, limit, cursor });
    pages.push(page.runs);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && pages.length < 50);
  return pages;
}

export function runHistoryContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: test history`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    test('tests by name, each with its latest ended runs newest first; flaky by retry and by commit, pass rates, durations', async () => {
      const sets = await record(store, newSet, [
        { labels: { commit: 'c1' }, runs: { login: pass(100), checkout: fail('boom\n  at x', 400), search: pass(10) } },
        { labels: { commit: 'c1' }, runs: { login: pass(300), checkout: pass(200), search: pass(20) } },
        { labels: { commit: 'c2' }, runs: { login: pass(200, 3), checkout: pass(300), search: pass(30) } },
        { labels: { commit: 'c3' }, runs: { login: pass(500), checkout: pass(100), search: fail('newly broken') } },
      ]);
      const page = await store.history.listTests({ env: 'staging', limit: 10, window: 50 });
      assert.equal(page.nextCursor, null);
      assert.deepEqual(page.tests.map((t) => [t.name, t.type, t.runs.length]), [['checkout', 'command', 4], ['login', 'command', 4], ['search', 'command', 4]]);
      const [checkout, login, search] = page.tests.map((t) => ({ ...t, figures: summarize(t.runs) }));
      assert.deepEqual(checkout!.runs.map((r) => r.setId), [...sets].reverse().map((s) => s.id), 'newest first');
      assert.deepEqual(checkout!.runs.map((r) => r.commit), ['c3', 'c2', 'c1', 'c1']);

      // checkout failed and passed on commit c1: both runs are flaky.
      assert.deepEqual(checkout!.figures.lastOutcomes.map((o) => o.flaky), [false, false, true, true]);
      assert.equal(checkout!.figures.flakyRate, 0.5);
      assert.equal(checkout!.figures.passRate, 0.75);
      assert.deepEqual(checkout!.figures.durationMs, { median: 250, p95: 400 });
      assert.deepEqual(checkout!.figures.lastFailure, { setId: sets[0]!.id, testRunId: checkout!.runs[3]!.testRunId, endedAt: checkout!.runs[3]!.endedAt, error: 'boom' });
      // login passed after retries once.
      assert.deepEqual(login!.figures.lastOutcomes.map((o) => o.flaky), [false, true, false, false]);
      assert.equal(login!.figures.flakyRate, 0.25);
      assert.equal(login!.figures.passRate, 1);
      assert.equal(login!.figures.lastFailure, null);
      // search is newly failing: its newest run failed, and nothing about it is flaky.
      assert.equal(search!.figures.lastOutcomes[0]?.result, 'FAIL');
      assert.equal(search!.figures.lastFailure?.error, 'newly broken');
      assert.equal(search!.figures.flakyRate, 0);
    });

    test('the window keeps the latest runs; cancelled members show in it; running ones do not', async () => {
      await record(store, newSet, [1, 2, 3, 4].map((i) => ({ runs: { a: pass(i) } })));
      await record(store, newSet, [{ cancel: ['a'] }]);
      const running = { ...newSet(1), runs: newSet(1).runs.map((r) => ({ ...r, spec: { ...r.spec, name: 'a' } })) };
      await store.sets.create(running);
      await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 60_000 });
      const [a] = (await store.history.listTests({ env: 'staging', limit: 10, window: 3 })).tests;
      assert.deepEqual(a!.runs.map((r) => [r.result, r.error, r.durationMs]), [['FAIL', 'cancelled', null], ['SUCCESS', null, 4], ['SUCCESS', null, 3]]);
      const figures = summarize(a!.runs);
      assert.equal(figures.runs, 2);
      assert.equal(figures.lastOutcomes[0]?.cancelled, true);
    });

    test('tests page by name with a cursor, filter on a part of the name (ASCII case ignored), and keep environments apart', async () => {
      const names = ['Alpha', 'beta', 'checkout: pays', 'delta', 'épsilon'];
      await record(store, newSet, [
        { runs: Object.fromEntries(names.map((n) => [n, pass()])) },
        { env: 'preview', runs: { beta: fail(), zeta: pass() } },
      ]);
      const walk = async (nameContains: string | undefined, limit: number) => {
        const pages: string[][] = [];
        let cursor: string | undefined;
        do {
          const page = await store.history.listTests({ env: 'staging', nameContains, limit, window: 50, cursor });
          pages.push(page.tests.map((t) => t.name));
          cursor = page.nextCursor ?? undefined;
        } while (cursor !== undefined && pages.length < 20);
        return pages;
      };
      assert.deepEqual(await walk(undefined, 2), [['Alpha', 'beta'], ['checkout: pays', 'delta'], ['épsilon']], 'byte order: upper case first, é last');
      assert.deepEqual(await walk(undefined, 5), [names]);
      assert.deepEqual((await walk('A', 1)).flat(), ['Alpha', 'beta', 'checkout: pays', 'delta']);
      assert.deepEqual((await walk('ÉPS', 10)).flat(), [], 'only ASCII letters ignore case');
      assert.deepEqual((await walk("' OR 1=1 --", 10)).flat(), []);
      const [beta] = (await store.history.listTests({ env: 'staging', nameContains: 'beta', limit: 10, window: 50 })).tests;
      assert.deepEqual(beta!.runs.map((r) => r.result), ['SUCCESS'], "preview's run of beta is not staging's");
      const preview = await store.history.listTests({ env: 'preview', limit: 10, window: 50 });
      assert.deepEqual(preview.tests.map((t) => t.name), ['beta', 'zeta']);
      assert.deepEqual((await store.history.listTests({ env: 'nowhere', limit: 10, window: 50 })).tests, []);
      await assert.rejects(store.history.listTests({ env: 'staging', limit: 10, window: 50, cursor: 'bm9wZQ' }), (e: unknown) => e instanceof RunsetError && e.code === 'invalid_query');
    });

    test("a test's history: every ended run once, newest first, with its set's labels, paged by a cursor", async () => {
      const sets = await record(store, newSet, [
        { labels: { commit: 'c1', branch: 'main' }, runs: { login: pass(100) } },
        { runs: { login: fail('Timeout\nstack', 250) } },
        { labels: { commit: 'c2' }, runs: { login: pass(150, 2) } },
        { cancel: ['login'] },
        { env: 'preview', runs: { login: pass() } },
      ]);
      const pages = await allRuns(store, 'staging', 'login', 3);
      assert.deepEqual(pages.map((p) => p.length), [3, 1]);
      const runs = pages.flat();
      assert.deepEqual(runs.map((r) => r.setId), sets.slice(0, 4).reverse().map((s) => s.id));
      assert.deepEqual(runs.map((r) => [r.result, r.attempts, r.durationMs, r.error]), [
        ['FAIL', 0, null, 'cancelled'],
        ['SUCCESS', 2, 150, null],
        ['FAIL', 1, 250, 'Timeout\nstack'],
        ['SUCCESS', 1, 100, null],
      ]);
      assert.deepEqual(runs[3]!.labels, { commit: 'c1', branch: 'main' });
      assert.deepEqual(runs[0]!.labels, {});
      assert.ok(runs[1]!.startedAt && runs[1]!.startedAt <= runs[1]!.endedAt);
      const member = (await store.sets.listRuns(sets[2]!.id))[0]!;
      assert.equal(runs[1]!.testRunId, member.id);
      assert.equal(runs[1]!.endedAt, member.endedAt);
      assert.deepEqual((await allRuns(store, 'staging', 'login', 4)).map((p) => p.length), [4], 'a full last page says there is no next one');
      assert.deepEqual((await allRuns(store, 'preview', 'login', 10)).flat().map((r) => r.setId), [sets[4]!.id]);
      assert.deepEqual((await allRuns(store, 'staging', 'logi', 10)).flat(), [], 'the exact name, not a part of it');
      await assert.rejects(store.history.testRuns({ env: 'staging', name: 'login', limit: 10, cursor: 'x' }), (e: unknown) => e instanceof RunsetError && e.code === 'invalid_query');
    });
  });
}
