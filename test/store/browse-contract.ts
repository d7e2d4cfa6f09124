/** Store contract for the dashboard: listing sets, a set's overrides, browser sessions. Run by runStoreContract for every backend. */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Store } from '../../src/store/store.js';
import type { NewTestRunSet } from '../../src/core/types.js';
import { RunsetError } from '../../src/core/errors.js';

type NewSet = (members: number, env?: string) => NewTestRunSet;

/** A set created `minutesAgo` before a fixed instant, so order does not hang on the clock. */
function aged(newSet: NewSet, minutesAgo: number, env = 'staging', id?: string): NewTestRunSet {
  const set = newSet(1, env);
  return { ...set, id: id ?? set.id, createdAt: new Date(Date.UTC(2030, 0, 1) - minutesAgo * 60_000).toISOString() };
}

async function pageThrough(
  store: Store,
  query: { env?: string; status?: 'WAITING' | 'RUNNING' | 'SUCCESS' | 'FAIL'; labels?: Record<string, string> },
  limit: number,
): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.setViews.list({ ...query, limit, cursor });
    pages.push(page.sets.map((s) => s.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && pages.length < 50);
  return pages;
}

export function runBrowseContract(name: string, makeStore: () => Promise<Store>, newSet: NewSet): void {
  describe(`Store contract: ${name}: dashboard`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });

    test('sets list newest first, paged by an opaque cursor, each set exactly once', async () => {
      const sets = [5, 1, 3, 2, 4].map((m) => aged(newSet, m));
      // Two sets created in the same millisecond: the id breaks the tie, so paging never skips or repeats.
      const twinIds = [randomUUID(), randomUUID()].sort();
      const twins = twinIds.map((id) => aged(newSet, 2.5, 'staging', id));
      for (const set of [...sets, ...twins]) await store.sets.create(set);

      const pages = await pageThrough(store, {}, 2);
      assert.deepEqual(pages.map((p) => p.length), [2, 2, 2, 1]);
      const expected = [sets[1]!, sets[3]!, twins[1]!, twins[0]!, sets[2]!, sets[4]!, sets[0]!].map((s) => s.id);
      assert.deepEqual(pages.flat(), expected);

      const whole = await store.setViews.list({ limit: 100 });
      assert.equal(whole.nextCursor, null);
      assert.deepEqual(whole.sets.map((s) => s.id), expected);
      assert.deepEqual(whole.sets[0], await store.sets.get(sets[1]!.id), 'list items are the same records as getSet');
      const exact = await store.setViews.list({ limit: 7 });
      assert.equal(exact.nextCursor, null, 'a full last page says there is no next one');
    });

    test('the selection a set was created with is kept as sent; none is null', async () => {
      const select = { tags: ['smoke', '@ui'], grep: 'check(out)?', grepInvert: 'slow', names: ['a › b, c'], projects: ['chromium'] };
      const chosen = { ...aged(newSet, 1), select };
      const all = aged(newSet, 2);
      for (const set of [chosen, all]) await store.sets.create(set);
      assert.deepEqual((await store.setViews.asked(chosen.id))?.selection, select);
      assert.equal((await store.setViews.asked(all.id))?.selection, null);
      assert.equal(await store.setViews.asked(randomUUID()), undefined);
    });

    test('labels are kept, and the list filters on all the labels asked, paging within the filter', async () => {
      const main = [1, 2, 3].map((m) => ({ ...aged(newSet, m), labels: { branch: 'main', ci: 'github', 'commit.sha': `c${m}` } }));
      const feature = { ...aged(newSet, 4), labels: { branch: 'feature/x', ci: 'github' } };
      const none = aged(newSet, 5);
      for (const set of [...main, feature, none]) await store.sets.create(set);

      assert.deepEqual((await store.setViews.asked(main[0]!.id))?.labels, { branch: 'main', ci: 'github', 'commit.sha': 'c1' });
      assert.deepEqual((await store.setViews.asked(none.id))?.labels, {});

      const ids = async (labels: Record<string, string>, limit = 100) => (await pageThrough(store, { labels }, limit)).flat();
      assert.deepEqual(await ids({ branch: 'main' }, 2), main.map((s) => s.id));
      assert.deepEqual(await ids({ ci: 'github' }), [...main, feature].map((s) => s.id));
      assert.deepEqual(await ids({ ci: 'github', branch: 'feature/x' }), [feature.id]);
      assert.deepEqual(await ids({ 'commit.sha': 'c2' }), [main[1]!.id], 'a key with a dot is one key, not a path');
      assert.deepEqual(await ids({ branch: 'nope' }), []);
      assert.deepEqual(await ids({ branch: "main' OR 1=1 --" }), []);
    });

    test('sets filter by environment and status, and page within the filter', async () => {
      const staging = [1, 2, 3].map((m) => aged(newSet, m, 'staging'));
      const preview = [4, 5].map((m) => aged(newSet, m, 'preview'));
      for (const set of [...staging, ...preview]) await store.sets.create(set);
      const [claimed] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
      const running = claimed!.setId;

      assert.deepEqual((await pageThrough(store, { env: 'preview' }, 1)).flat(), preview.map((s) => s.id));
      assert.deepEqual((await pageThrough(store, { status: 'RUNNING' }, 10)).flat(), [running]);
      const waitingStaging = staging.map((s) => s.id).filter((id) => id !== running);
      assert.deepEqual((await pageThrough(store, { env: 'staging', status: 'WAITING' }, 1)).flat(), waitingStaging);
      assert.deepEqual((await store.setViews.list({ env: 'nowhere', limit: 10 })).sets, []);
      // Found by the API fuzz: PostgreSQL text cannot hold a NUL byte; such an environment has no sets, on either store.
      assert.deepEqual(await store.setViews.list({ env: 'stag\0ing', limit: 10 }), { sets: [], nextCursor: null });
    });

    test('a cursor that the store did not make is refused as invalid_query', async () => {
      const at = '2026-01-01T00:00:00.000Z';
      const made = (id: string) => Buffer.from(JSON.stringify([at, id])).toString('base64url');
      for (const cursor of ['garbage', Buffer.from('[1,2]').toString('base64url'), Buffer.from('["x","y"]').toString('base64url'), made('a\0b'), made('not-a-uuid')]) {
        await assert.rejects(store.setViews.list({ limit: 5, cursor }), (err: unknown) => err instanceof RunsetError && err.code === 'invalid_query');
      }
    });

    test('a set keeps its overrides as sent, secret ones sealed', async () => {
      const set = { ...newSet(1), overrides: { BASE_URL: { kind: 'plain' as const, value: 'http://pr-1' }, TOKEN: { kind: 'sealed' as const, box: 'v1.a.b.c' } } };
      await store.sets.create(set);
      assert.deepEqual((await store.setViews.asked(set.id))?.overrides, set.overrides);
    });

    test('a set keeps what a rerun of it inherits: its deadline and its concurrency group; none are null', async () => {
      const grouped = { ...newSet(1), timeoutSeconds: 600, concurrencyGroup: 'pr-42' };
      const plain = newSet(2);
      for (const set of [grouped, plain]) await store.sets.create(set);
      assert.deepEqual(await store.setViews.asked(grouped.id), {
        overrides: grouped.overrides, labels: {}, suiteVersion: null, selection: null, timeoutSeconds: 600, concurrencyGroup: 'pr-42',
      });
      const none = await store.setViews.asked(plain.id);
      assert.deepEqual([none?.timeoutSeconds, none?.concurrencyGroup, none?.suiteVersion], [null, null, null]);
    });

    test('sessions: found while live, gone when deleted, expired or when their key is revoked', async () => {
      const key = await store.keys.create({ id: randomUUID(), name: 'me', hash: randomUUID() });
      const made = await store.keys.createSession({ idHash: 'h-live', keyId: key.id, csrfToken: 'csrf-1', ttlMs: 60_000 });
      assert.equal(made.key.id, key.id);
      assert.equal(made.key.name, 'me');
      assert.equal(made.csrfToken, 'csrf-1');
      assert.ok(Date.parse(made.expiresAt) > Date.now() + 50_000);
      assert.deepEqual(await store.keys.findSession('h-live'), made);
      assert.equal(await store.keys.findSession('h-unknown'), undefined);

      await store.keys.deleteSession('h-live');
      assert.equal(await store.keys.findSession('h-live'), undefined);

      await store.keys.createSession({ idHash: 'h-short', keyId: key.id, csrfToken: 'c', ttlMs: 1 });
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(await store.keys.findSession('h-short'), undefined, 'an expired session is not found');

      await store.keys.createSession({ idHash: 'h-revoked', keyId: key.id, csrfToken: 'c', ttlMs: 60_000 });
      assert.ok(await store.keys.findSession('h-revoked'));
      await store.keys.revoke(key.id);
      assert.equal(await store.keys.findSession('h-revoked'), undefined, 'revoking the key ends its sessions');
    });
  });
}
