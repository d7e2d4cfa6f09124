import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { SetRowCache } from '../../src/store/sqlite/set-cache.js';
import { runStoreContract } from './contract.js';

// As `runset serve` opens it: the owner of the data dir, which keeps a copy of
// the set rows it reads (SetRowCache). The contract's reads after every move
// prove that copy is never stale.
runStoreContract('sqlite', async () => {
  const store = new SqliteStore(path.join(mkdtempSync(path.join(tmpdir(), 'runset-store-')), 'runset.db'), { owner: true });
  await store.migrate();
  return store;
});

test('the set-row copy is bounded, oldest out first, and hands out frozen records', () => {
  const cache = new SetRowCache(2);
  const row = (id: string) => ({
    id,
    env: 'e',
    status: 'WAITING' as const,
    counts: { WAITING: 1, RUNNING: 0, SUCCESS: 0, FAIL: 0 },
    createdAt: '2026-11-23T00:00:00.000Z',
    startedAt: null,
    endedAt: null,
  });
  const a = cache.set(row('a'));
  cache.set(row('b'));
  cache.set(row('c'));
  assert.equal(cache.get('a'), undefined, 'the oldest went');
  assert.equal(cache.get('c')?.id, 'c');
  assert.ok(Object.isFrozen(a) && Object.isFrozen(a.counts));
  cache.drop('c');
  assert.equal(cache.get('c'), undefined);
});
