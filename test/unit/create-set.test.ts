/**
 * The one way a set is made (src/sets/create.ts), on a real SQLite store:
 * create and rerun alike plan with the environment's history and quarantine,
 * spend the key's budget once (before a pattern runs, else once judged, and
 * never for a refused plan), store the set, wake the workers and log it; a set
 * of a concurrency group supersedes the group's older ones. What a rerun
 * inherits of the set it repeats (deadline, group) is planRerun's, tested here
 * too.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSet, rerunSet, type SetMaker } from '../../src/sets/create.js';
import { planTestRunSet } from '../../src/sets/plan.js';
import { planRerun } from '../../src/sets/rerun.js';
import { RunsetError } from '../../src/core/errors.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/store.js';
import type { SuiteConfig } from '../../src/config/suite.js';
import type { EnvironmentConfig, TestSpec } from '../../src/core/types.js';

const cmd = (name: string): TestSpec => ({ name, type: 'command', run: ['true'], cwd: '/', tags: [], timeoutSeconds: 120, retries: 0 });
const staging: EnvironmentConfig = {
  name: 'staging', variables: {}, maxFailures: null, maxConcurrentSets: null, setTimeoutSeconds: 3600,
  failOnFlaky: false, allowPrivateTargets: false, allowSuiteUploads: false, overrideRules: {},
};
const suite: SuiteConfig = {
  file: '/x/runset.config.yaml', dir: '/x', environments: new Map([['staging', staging]]), tests: [cmd('quick'), cmd('slow'), cmd('flaky')],
  webhooks: [], codeHosts: { github: null, gitlab: null },
};
const secretKey = randomBytes(32);

const dir = mkdtempSync(path.join(tmpdir(), 'runset-create-set-'));
const opened: Store[] = [];
after(async () => {
  for (const store of opened) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh store with a history (slow is slower) and a quarantine (flaky), and a maker that counts what it spends, wakes and logs. */
async function setup(name: string, budget = Infinity) {
  const store = await openStore({ databaseUrl: undefined, databaseSchema: 'runset', dataDir: path.join(dir, name) });
  opened.push(store);
  await store.durations.record([{ env: 'staging', name: 'quick', ms: 100 }, { env: 'staging', name: 'slow', ms: 9_000 }]);
  await store.quarantine.put({ env: 'staging', name: 'flaky', reason: 'r', until: new Date(Date.now() + 86_400_000).toISOString(), createdByKeyId: null, createdByName: 'ops' });
  const seen = { spent: 0, wakes: 0, logs: [] as string[] };
  store.claims.onRunsWaiting(() => seen.wakes++);
  const maker: SetMaker = {
    store, suite, secretKey, keyId: null,
    spend: () => {
      if (seen.spent >= budget) throw new RunsetError('rate_limited', 'spent');
      seen.spent++;
    },
    log: { info: (_fields, message) => seen.logs.push(message), warn: (_fields, message) => seen.logs.push(message) },
  };
  return { store, maker, seen };
}

const membersOf = async (store: Store, id: string) =>
  Object.fromEntries((await store.sets.listRuns(id)).map((r) => [r.name, { expectedMs: r.expectedMs, quarantined: r.quarantined }]));

test('create and run again make a set the same way: history, quarantine, one spend, a wake-up and a log line each', async () => {
  const { store, maker, seen } = await setup('shared');
  const first = await createSet(maker, { env: 'staging', labels: { branch: 'main' } });
  const again = await rerunSet(maker, (await store.sets.get(first))!);
  for (const id of [first, again]) {
    const members = await membersOf(store, id);
    assert.equal(members.slow?.expectedMs, 9_000, 'planned from the duration history');
    assert.deepEqual([members.flaky?.quarantined, members.quick?.quarantined], [true, false], 'planned with the quarantine of now');
  }
  assert.deepEqual((await store.setViews.asked(again))?.labels, { branch: 'main' });
  // Wake-ups come from the store's events: let them arrive.
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual([seen.spent, seen.wakes], [2, 2]);
  assert.deepEqual(seen.logs, ['test run set created', 'test run set created (run again)']);
});

test('a key without budget makes no set, by either path; a pattern spends before the plan runs, even when the plan refuses', async () => {
  const { store, maker, seen } = await setup('budget', 1);
  const first = await createSet(maker, { env: 'staging' });
  const earlier = (await store.sets.get(first))!;
  await assert.rejects(createSet(maker, { env: 'staging' }), { code: 'rate_limited' });
  await assert.rejects(rerunSet(maker, earlier), { code: 'rate_limited' });
  assert.equal((await store.setViews.list({ limit: 10 })).sets.length, 1);

  const { maker: patterned, seen: spentOn } = await setup('patterned');
  await assert.rejects(createSet(patterned, { env: 'staging', select: { grep: '^none$' } }), { code: 'no_tests_selected' });
  assert.equal(spentOn.spent, 1, 'a pattern spends the budget before it runs');
  await assert.rejects(createSet(patterned, { env: 'staging', envOverride: { NOPE: 'x' } }), { code: 'undeclared_variable' });
  assert.equal(spentOn.spent, 1, 'a refused plan without a pattern spends nothing');
  assert.equal(seen.spent, 1);
});

test('a set of a concurrency group supersedes the older unfinished sets of its group', async () => {
  const { store, maker } = await setup('group');
  const older = await createSet(maker, { env: 'staging', concurrencyGroup: 'pr-42' });
  const other = await createSet(maker, { env: 'staging', concurrencyGroup: 'pr-43' });
  const newer = await createSet(maker, { env: 'staging', concurrencyGroup: 'pr-42' });
  assert.deepEqual((await store.sets.control(older))?.cancellation?.error, `superseded by ${newer}`);
  assert.equal((await store.sets.get(other))?.status, 'WAITING');
  assert.equal((await store.sets.get(newer))?.status, 'WAITING');
});

test('an Idempotency-Key makes one set; a repeat with the same body gets it back unspent, with another body 422', async () => {
  const { maker, seen } = await setup('idempotent');
  const first = await createSet(maker, { env: 'staging', labels: { a: '1', b: '2' } }, 'k-1');
  assert.equal(await createSet(maker, { env: 'staging', labels: { b: '2', a: '1' } }, 'k-1'), first, 'key order makes no other body');
  assert.equal(seen.spent, 1);
  await assert.rejects(createSet(maker, { env: 'staging' }, 'k-1'), { code: 'idempotency_conflict' });
});

test('a rerun keeps the deadline and the concurrency group of the set it repeats, the deadline never past today\'s setTimeout', () => {
  const first = planTestRunSet(suite, { env: 'staging', timeoutSeconds: 600, concurrencyGroup: 'pr-42' }, { secretKey, keyId: null });
  const earlier = { id: first.id, env: first.env, overrides: {}, labels: {}, timeoutSeconds: first.timeoutSeconds, concurrencyGroup: first.concurrencyGroup };
  const again = planRerun(suite, earlier, { secretKey, keyId: null });
  assert.deepEqual([again.timeoutSeconds, again.concurrencyGroup], [600, 'pr-42']);

  const shorter: SuiteConfig = { ...suite, environments: new Map([['staging', { ...staging, setTimeoutSeconds: 300 }]]) };
  assert.equal(planRerun(shorter, earlier, { secretKey, keyId: null }).timeoutSeconds, 300, 'an operator\'s shorter setTimeout still bounds it');

  const plain = planRerun(suite, { ...earlier, timeoutSeconds: null, concurrencyGroup: null }, { secretKey, keyId: null });
  assert.deepEqual([plain.timeoutSeconds, plain.concurrencyGroup], [3600, null], 'none given: the environment\'s own, no group');
});

test('run again through the store: the rerun is stored with the earlier set\'s deadline and group, and supersedes the group\'s older unfinished sets', async () => {
  const { store, maker } = await setup('rerun-inherits');
  const earlier = await createSet(maker, { env: 'staging', timeoutSeconds: 600, concurrencyGroup: 'pr-42' });
  const again = await rerunSet(maker, (await store.sets.get(earlier))!);
  const asked = await store.setViews.asked(again);
  assert.deepEqual([asked?.timeoutSeconds, asked?.concurrencyGroup], [600, 'pr-42']);
  assert.equal((await store.sets.control(earlier))?.cancellation?.error, `superseded by ${again}`, 'the rerun is the group\'s newest set');
});
