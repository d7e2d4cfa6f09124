/**
 * Store contract for the webhook outbox: a set's start and end become events in
 * the transactions that made them (claims, finishes, cancels), each event is
 * fanned out once into deliveries, a due delivery is leased to one caller, its
 * attempts are recorded (fenced by the lease), retried, delivered or given up,
 * and a lost lease gives it back. Run by runStoreContract for every backend.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NewTestRunSet } from '../../src/core/types.js';
import type { AttemptOutcome, SetEvent } from '../../src/core/webhooks.js';
import { leaseOf, type Store } from '../../src/store/store.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

const passed = { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 40 };
const refused: AttemptOutcome = { delivered: false, statusCode: 500, error: 'HTTP 500', durationMs: 12, retryInMs: 0, body: '{"n":1}' };
const accepted: AttemptOutcome = { delivered: true, statusCode: 204, error: null, durationMs: 8, retryInMs: null, body: '{"n":2}' };
/** Routes every event to the webhooks named after it, and remembers what it saw. */
function router(seen: SetEvent[], names: Record<string, string[]>) {
  return (event: SetEvent) => {
    seen.push(event);
    return names[event.event] ?? [];
  };
}

export function runWebhookContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: webhook outbox`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    test('a set start and end are events once each, fanned out to the webhooks the router names', async () => {
      const set = newSet(2, 'production');
      await store.sets.create(set);
      assert.equal(await store.webhooks.fanOut(() => ['never'], 10), 0, 'a created set has no event yet');

      const [first] = await store.claims.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 10_000 });
      const [second] = await store.claims.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 10_000 });
      assert.ok(await store.claims.finishRun(leaseOf(first!), passed));
      assert.ok(await store.claims.finishRun(leaseOf(second!), passed));
      assert.equal(await store.webhooks.eventsWaiting(set.id), 2, 'its start and end wait to be fanned out');

      const seen: SetEvent[] = [];
      assert.equal(await store.webhooks.fanOut(router(seen, { 'set.started': ['chat'], 'set.finished': ['chat', 'pager'] }), 10), 2);
      assert.deepEqual(
        seen.map((e) => [e.setId, e.env, e.event]),
        [
          [set.id, 'production', 'set.started'],
          [set.id, 'production', 'set.finished'],
        ],
      );
      assert.equal(await store.webhooks.fanOut(() => ['again'], 10), 0, 'an event is taken once');
      assert.equal(await store.webhooks.eventsWaiting(set.id), 0);

      const deliveries = await store.webhooks.listDeliveries(set.id);
      assert.deepEqual(deliveries.map((d) => [d.event, d.webhook, d.state, d.attempts, d.history.length]).sort(), [
        ['set.finished', 'chat', 'pending', 0, 0],
        ['set.finished', 'pager', 'pending', 0, 0],
        ['set.started', 'chat', 'pending', 0, 0],
      ]);
      assert.ok(deliveries.every((d) => d.setId === set.id && d.nextAttemptAt !== null && d.deliveredAt === null));
    });

    test("an event carries its set's commit label (what code hosts report on), null without one", async () => {
      const labelled = { ...newSet(1), labels: { commit: 'a1b2c3d', branch: 'main' } };
      const plain = newSet(1);
      await store.sets.create(labelled);
      await store.sets.create(plain);
      await store.sets.cancel(labelled.id, { byKeyId: null, byKeyName: null, error: 'cancelled' });
      await store.sets.cancel(plain.id, { byKeyId: null, byKeyName: null, error: 'cancelled' });
      const seen: SetEvent[] = [];
      await store.webhooks.fanOut(router(seen, {}), 10);
      assert.deepEqual(seen.map((e) => [e.setId, e.commit]), [[labelled.id, 'a1b2c3d'], [plain.id, null]]);
    });

    test("a set's Playwright cases by member id: the file and line a failure is annotated at", async () => {
      const set = newSet(2);
      const pw = { ...set.runs[0]!, spec: { type: 'playwright' as const, name: 'shop.spec.ts › pays', tags: [], dir: '/s', config: '/s/playwright.config.ts', timeoutSeconds: 30, retries: 0, timeoutOverride: false, retriesOverride: false,
        case: { entry: 'ui', project: '', browser: 'chromium', file: 'shop.spec.ts', line: 7, titles: ['pays'] } } };
      await store.sets.create({ ...set, runs: [pw, set.runs[1]!] });
      const cases = await store.setViews.playwrightCases(set.id);
      assert.deepEqual([...cases], [[pw.id, pw.spec.case]]);
      assert.deepEqual([...(await store.setViews.playwrightCases('no-such-set'))], []);
    });

    test('a cancelled set ends with its event, and an event no webhook wants is dropped', async () => {
      const set = newSet(3);
      await store.sets.create(set);
      await store.sets.cancel(set.id, { byKeyId: null, byKeyName: null, error: 'cancelled' });
      const seen: SetEvent[] = [];
      assert.equal(await store.webhooks.fanOut(router(seen, {}), 10), 1);
      assert.deepEqual(seen.map((e) => e.event), ['set.finished'], 'never started: no set.started');
      assert.deepEqual(await store.webhooks.listDeliveries(set.id), []);
      assert.equal(await store.webhooks.fanOut(router(seen, { 'set.finished': ['x'] }), 10), 0);
    });

    test("an event carries its set's status and the result of the environment's previous ended set (for webhooks' when)", async () => {
      // Created a second apart, in this order (the previous set is the newest earlier one by creation time).
      const base = Date.now() - 60_000;
      let made = 0;
      const next = (env: string) => ({ ...newSet(1, env), createdAt: new Date(base + 1000 * made++).toISOString() });
      const pass = next('prod');
      await store.sets.create(pass);
      const [run] = await store.claims.claimRuns({ workerId: 'w1', limit: 1, leaseMs: 10_000 });
      assert.ok(await store.claims.finishRun(leaseOf(run!), passed));
      const cancelled = { byKeyId: null, byKeyName: null, error: 'cancelled' };
      const running = next('prod');
      await store.sets.create(running); // never ends: not anyone's previous set
      const [failA, failB, elsewhere] = [next('prod'), next('prod'), next('other')];
      for (const set of [failA, failB, elsewhere]) {
        await store.sets.create(set);
        await store.sets.cancel(set.id, cancelled);
      }
      const seen: SetEvent[] = [];
      await store.webhooks.fanOut(router(seen, {}), 20);
      const ends = new Map(seen.filter((e) => e.event === 'set.finished').map((e) => [e.setId, [e.status, e.previousStatus]]));
      assert.deepEqual(ends.get(pass.id), ['SUCCESS', null], 'the first of its environment has no previous');
      assert.deepEqual(ends.get(failA.id), ['FAIL', 'SUCCESS'], 'the set still running is skipped');
      assert.deepEqual(ends.get(failB.id), ['FAIL', 'FAIL']);
      assert.deepEqual(ends.get(elsewhere.id), ['FAIL', null], 'another environment is not a previous set');
      assert.deepEqual(seen.find((e) => e.event === 'set.started' && e.setId === pass.id)?.status, 'SUCCESS', 'the status when fanned out');
    });

    test('two fan-outs at once take each event once', async () => {
      const sets = [newSet(1), newSet(1), newSet(1), newSet(1)];
      for (const set of sets) {
        await store.sets.create(set);
        await store.sets.cancel(set.id, { byKeyId: null, byKeyName: null, error: 'cancelled' });
      }
      const route = () => ['hook'];
      const taken = await Promise.all([store.webhooks.fanOut(route, 2), store.webhooks.fanOut(route, 2), store.webhooks.fanOut(route, 2)]);
      const rest = await store.webhooks.fanOut(route, 10);
      assert.equal(taken.reduce((a, b) => a + b, 0) + rest, 4);
      for (const set of sets) assert.equal((await store.webhooks.listDeliveries(set.id)).length, 1);
    });

    test('a due delivery is leased to one caller; attempts are recorded, retried, then delivered', async () => {
      const set = newSet(1);
      await store.sets.create(set);
      await store.sets.cancel(set.id, { byKeyId: null, byKeyName: null, error: 'cancelled' });
      await store.webhooks.fanOut(() => ['hook'], 10);

      const [due, ...others] = await store.webhooks.claimDue(10, 60_000);
      assert.ok(due);
      assert.deepEqual(others, []);
      assert.equal(due.body, null, 'no body before the first attempt');
      assert.ok(due.ageMs >= 0 && due.ageMs < 60_000);
      assert.deepEqual(await store.webhooks.claimDue(10, 60_000), [], 'a leased delivery is not handed out twice');

      assert.ok(await store.webhooks.recordAttempt(due, refused));
      assert.equal(await store.webhooks.recordAttempt(due, refused), false, 'the lease ended with the record');
      const [again] = await store.webhooks.claimDue(10, 60_000);
      assert.equal(again?.id, due.id, 'retried when due');
      assert.equal(again?.body, '{"n":1}', 'the first attempt\'s body is kept for every retry');
      assert.equal(again?.attempts, 1);
      assert.equal(await store.webhooks.recordAttempt({ id: due.id, leaseToken: 'someone-else' }, accepted), false, 'fenced by the lease token');
      assert.ok(await store.webhooks.recordAttempt(again, accepted));
      assert.deepEqual(await store.webhooks.claimDue(10, 60_000), []);

      const [delivery] = await store.webhooks.listDeliveries(set.id);
      assert.equal(delivery?.state, 'delivered');
      assert.ok(delivery?.deliveredAt);
      assert.equal(delivery?.nextAttemptAt, null);
      assert.deepEqual(
        delivery?.history.map((a) => [a.n, a.statusCode, a.error, a.durationMs]),
        [
          [1, 500, 'HTTP 500', 12],
          [2, 204, null, 8],
        ],
      );
      assert.ok(delivery?.history.every((a) => !Number.isNaN(Date.parse(a.at))));
    });

    test('a retry waits its delay, giving up fails the delivery, and a lost lease gives it back', async () => {
      const set = newSet(1);
      await store.sets.create(set);
      await store.sets.cancel(set.id, { byKeyId: null, byKeyName: null, error: 'cancelled' });
      await store.webhooks.fanOut(() => ['later', 'never', 'lost'], 10);
      const due = new Map((await store.webhooks.claimDue(10, 60_000)).map((d) => [d.webhook, d]));
      assert.equal(due.size, 3);

      assert.ok(await store.webhooks.recordAttempt(due.get('later')!, { ...refused, retryInMs: 60_000 }));
      assert.ok(await store.webhooks.recordAttempt(due.get('never')!, { ...refused, statusCode: null, error: 'timed out', retryInMs: null }));
      assert.deepEqual(await store.webhooks.claimDue(10, 60_000), [], 'not due yet, given up, or still leased');

      const byName = new Map((await store.webhooks.listDeliveries(set.id)).map((d) => [d.webhook, d]));
      assert.equal(byName.get('later')?.state, 'pending');
      assert.ok(Date.parse(byName.get('later')!.nextAttemptAt!) > Date.now() + 50_000);
      assert.equal(byName.get('never')?.state, 'failed');
      assert.equal(byName.get('never')?.history[0]?.statusCode, null);
      assert.equal(byName.get('never')?.history[0]?.error, 'timed out');

      // A lease that runs out (its holder died mid-attempt) is handed out again.
      await store.webhooks.fanOut(() => [], 10);
      const set2 = newSet(1);
      await store.sets.create(set2);
      await store.sets.cancel(set2.id, { byKeyId: null, byKeyName: null, error: 'cancelled' });
      await store.webhooks.fanOut(() => ['short'], 10);
      const [short] = await store.webhooks.claimDue(10, 1);
      assert.ok(short);
      await new Promise((resolve) => setTimeout(resolve, 30));
      const [retaken] = await store.webhooks.claimDue(10, 60_000);
      assert.equal(retaken?.id, short.id);
      assert.equal(await store.webhooks.recordAttempt(short, accepted), false, 'the first holder is fenced out');
      assert.ok(await store.webhooks.recordAttempt(retaken, accepted));
    });
  });
}
