/**
 * The store seen through the metrics (src/metrics/store.ts), over a real SQLite
 * store: what it counts — sets created (not an idempotent replay), ended sets
 * as their events fan out, lost leases, failed operations by name — and that
 * everything else passes through unchanged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { leaseOf } from '../../src/store/store.js';
import { RunsetMetrics } from '../../src/metrics/registry.js';
import { instrumentStore } from '../../src/metrics/store.js';
import { newSet } from '../store/fixtures.js';
import { tempDir } from '../helpers/server.js';
import { parseExposition, valueOf } from '../helpers/prometheus.js';

test('the instrumented store counts sets, ended sets, lost leases and store errors', async () => {
  const raw = new SqliteStore(path.join(tempDir(), 'runset.db'), { owner: true });
  await raw.migrate();
  const metrics = new RunsetMetrics();
  const store = instrumentStore(raw, metrics);
  const read = async () => parseExposition((await metrics.scrape()).body);
  try {
    assert.equal(store.kind, 'sqlite');
    const first = newSet(1, 'staging');
    await store.sets.create(first);
    const idem = { keyId: 'k', key: randomUUID(), bodyHash: 'h', ttlMs: 60_000 };
    assert.ok((await store.sets.createOnce(newSet(1, 'preview'), idem)).created);
    assert.equal((await store.sets.createOnce(newSet(1, 'preview'), idem)).created, false, 'a replay');
    assert.equal((await store.sets.get(first.id))?.env, 'staging');
    assert.equal(store.sets.peek?.(first.id)?.id, first.id, 'a synchronous method answers as it did (from the copy getSet left)');

    // Both lose their leases to the reaper, then run again and end their sets.
    const [a, b] = await store.claims.claimRuns({ workerId: 'w', limit: 2, leaseMs: 1 });
    assert.ok(a && b);
    await new Promise((r) => setTimeout(r, 10));
    await store.claims.reapExpired(3);
    const both = await store.claims.claimRuns({ workerId: 'w', limit: 2, leaseMs: 60_000 });
    assert.equal(both.length, 2);
    for (const run of both) assert.ok(await store.claims.finishRun(leaseOf(run), { status: 'FAIL', attempts: 1, error: 'x', output: '', durationMs: 5 }));
    assert.equal(await store.webhooks.fanOut(() => [], 10), 4, 'two sets started and ended');

    await raw.close();
    await assert.rejects(store.sets.listRuns(first.id));
    const s = await read();
    assert.equal(valueOf(s, 'runset_sets_created_total', { env: 'staging' }), 1);
    assert.equal(valueOf(s, 'runset_sets_created_total', { env: 'preview' }), 1);
    assert.equal(valueOf(s, 'runset_sets_ended_total', { env: 'staging', status: 'FAIL' }), 1);
    assert.equal(valueOf(s, 'runset_sets_ended_total', { env: 'preview', status: 'FAIL' }), 1);
    assert.equal(valueOf(s, 'runset_leases_lost_total', { outcome: 'requeued' }), 2);
    assert.equal(valueOf(s, 'runset_store_errors_total', { operation: 'sets.listRuns' }), 1);
  } finally {
    await raw.close();
  }
});
