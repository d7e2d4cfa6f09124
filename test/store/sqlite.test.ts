import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { SetRowCache } from '../../src/store/sqlite/set-cache.js';
import Database from 'better-sqlite3';
import { batchKeyOf } from '../../src/core/batch.js';
import { runStoreContract } from './contract.js';
import { caseSpec } from './batch-contract.js';
import { newSet } from './fixtures.js';

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
    failing: 0,
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

test('batch keys stored by an older runset, one per entry and project, still batch: each project apart', async () => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'runset-store-')), 'runset.db');
  const store = new SqliteStore(file, { owner: false });
  await store.migrate();
  const set = newSet(4);
  const projects = ['setup', 'chromium', 'chromium', 'setup'];
  set.runs.forEach((run, i) => (run.spec = caseSpec(`case ${i}`, 'e2e', projects[i])));
  await store.sets.create(set);
  assert.equal(new Set(set.runs.map((r) => batchKeyOf(r.spec))).size, 1, 'today: one key for the entry');
  const db = new Database(file);
  const old = db.prepare('UPDATE test_runs SET batch_key = ? WHERE id = ?');
  set.runs.forEach((run, i) => old.run(`playwright:${JSON.stringify(['e2e', projects[i]])}`, run.id));
  db.close();
  const [head] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
  assert.equal(head?.batchKey, 'playwright:["e2e","setup"]');
  const rest = await store.claims.claimBatch({ workerId: 'w', setId: set.id, batchKey: head.batchKey, limit: 10, leaseMs: 10_000 });
  assert.deepEqual(rest.map((r) => r.spec.name), ['a.spec.ts › case 3'], 'the same project only');
  await store.close();
});
