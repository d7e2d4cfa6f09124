/**
 * Set retention on both stores: the store contract (retention-contract.ts) and
 * the sweep over it (src/retention/sets.ts), artifact bytes included. The
 * PostgreSQL half needs RUNSET_TEST_DATABASE_URL and skips, saying so, without it.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { FileBlobStore, type ArtifactBlobStore } from '../../src/artifacts/blobs.js';
import { artifactSaver } from '../../src/artifacts/save.js';
import { BATCH_BUDGET_MS, countEndedSets, nextBatchSize, removeEndedSets } from '../../src/retention/sets.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { leaseOf, type Store } from '../../src/store/store.js';
import { dropSchemas, query } from '../helpers/postgres.js';
import { tempDir } from '../helpers/server.js';
import { newSet } from './fixtures.js';
import { runRetentionContract } from './retention-contract.js';

const url = process.env.RUNSET_TEST_DATABASE_URL ?? '';
const TABLES = ['test_runs', 'artifacts', 'idempotency_keys', 'set_events', 'webhook_deliveries'];

async function sqliteStore(): Promise<SqliteStore> {
  // As `runset serve` opens it: the owner, with its copy of set rows (which removal must drop).
  const store = new SqliteStore(path.join(tempDir('runset-retention-'), 'runset.db'), { owner: true });
  await store.migrate();
  return store;
}

function sqliteRows(store: Store, setId: string): Promise<Record<string, number>> {
  const db = new Database((store as SqliteStore).file, { readonly: true });
  try {
    const count = (sql: string, ...args: string[]) => (db.prepare(sql).pluck().get(...args) as number);
    const rows: Record<string, number> = { test_run_sets: count('SELECT count(*) FROM test_run_sets WHERE id = ?', setId) };
    for (const t of TABLES) rows[t] = count(`SELECT count(*) FROM ${t} WHERE set_id = ?`, setId);
    rows.webhook_attempts = count('SELECT count(*) FROM webhook_attempts');
    return Promise.resolve(rows);
  } finally {
    db.close();
  }
}

runRetentionContract('sqlite', sqliteStore, sqliteRows);

/** Runs a one-member set to its end with an artifact whose bytes are in `blobs`; returns the artifact's location. */
async function endedSetWithArtifact(store: Store, blobs: ArtifactBlobStore): Promise<string> {
  const set = newSet(1);
  await store.sets.create(set);
  const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
  const file = path.join(tempDir(), 'trace.zip');
  writeFileSync(file, randomBytes(300));
  const saved = await artifactSaver(blobs).save([{ name: 'trace.zip', contentType: 'application/zip', path: file }], [], tempDir());
  assert.ok(await store.claims.finishRun(leaseOf(run!), { status: 'FAIL', attempts: 1, error: 'x', output: '', durationMs: 1, artifacts: saved.artifacts }));
  return saved.artifacts[0]!.location;
}

async function sweepRemovesBytes(store: Store, blobs: ArtifactBlobStore): Promise<void> {
  const locations = [await endedSetWithArtifact(store, blobs), await endedSetWithArtifact(store, blobs), await endedSetWithArtifact(store, blobs)];
  const later = Date.now() + 60_000;
  assert.deepEqual(await removeEndedSets(store, blobs, { retentionMs: 120_000, now: later }), { before: new Date(later - 120_000).toISOString(), sets: 0, members: 0, artifacts: 0, artifactBytes: 0 }, 'ended within the retention: kept');
  const dry = await countEndedSets(store, 1000, later);
  assert.deepEqual([dry.sets, dry.members, dry.artifacts, dry.artifactBytes], [3, 3, 3, 900]);
  for (const location of locations) assert.ok(await blobs.open(location), 'counting removed no bytes');
  // Batches of two: the sweep goes on until a batch comes back short.
  const swept = await removeEndedSets(store, blobs, { retentionMs: 1000, now: later, batch: 2 });
  assert.deepEqual({ ...swept, before: undefined }, { ...dry, before: undefined });
  for (const location of locations) assert.equal(await blobs.open(location), undefined, 'the bytes went with the rows');
}

test('batches are sized to the time budget, at most doubling or halving at once, within bounds', () => {
  const budget = BATCH_BUDGET_MS.sqlite;
  assert.equal(nextBatchSize(50, budget, budget), 50);
  assert.equal(nextBatchSize(50, budget * 1.25, budget), 40);
  assert.equal(nextBatchSize(50, budget * 10, budget), 25, 'halved at most');
  assert.equal(nextBatchSize(50, 0, budget), 100, 'doubled at most');
  assert.equal(nextBatchSize(800, 1, budget), 1000);
  assert.equal(nextBatchSize(6, 1000, budget), 5);
});

test('sqlite: the sweep removes ended sets batch by batch, and their artifact files', async () => {
  const store = await sqliteStore();
  try {
    await sweepRemovesBytes(store, new FileBlobStore(path.join(tempDir(), 'artifacts')));
  } finally {
    await store.close();
  }
});

test('sqlite: a removed set is no longer served from the owner\'s copy of set rows', async () => {
  const store = await sqliteStore();
  try {
    const set = newSet(1);
    await store.sets.create(set);
    const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
    await store.claims.finishRun(leaseOf(run!), { status: 'SUCCESS', attempts: 1, error: null, output: '', durationMs: 1 });
    assert.equal((await store.sets.get(set.id))?.status, 'SUCCESS', 'read once: now in the copy');
    assert.ok(store.sets.peek(set.id));
    await store.retention.removeEndedBefore('2999-01-01T00:00:00.000Z', 10);
    assert.equal(store.sets.peek(set.id), undefined);
    assert.equal(await store.sets.get(set.id), undefined);
  } finally {
    await store.close();
  }
});

describe('set retention on PostgreSQL', { skip: url ? false : 'RUNSET_TEST_DATABASE_URL is not set' }, () => {
  const schemas: string[] = [];
  after(async () => {
    await dropSchemas(url, schemas);
  });
  async function pgStore(): Promise<PostgresStore> {
    const schema = `runset_test_${randomBytes(6).toString('hex')}`;
    schemas.push(schema);
    const store = new PostgresStore({ connectionString: url, schema });
    await store.migrate();
    return store;
  }
  async function pgRows(store: Store, setId: string): Promise<Record<string, number>> {
    const s = `"${(store as PostgresStore).schema}"`;
    const count = async (sql: string, values: string[] = [setId]) => Number((await query<{ n: string }>(url, sql, values))[0]!.n);
    const rows: Record<string, number> = { test_run_sets: await count(`SELECT count(*) AS n FROM ${s}.test_run_sets WHERE id = $1`) };
    for (const t of TABLES) rows[t] = await count(`SELECT count(*) AS n FROM ${s}.${t} WHERE set_id = $1`);
    rows.webhook_attempts = await count(`SELECT count(*) AS n FROM ${s}.webhook_attempts`, []);
    return rows;
  }

  runRetentionContract('postgres', pgStore, pgRows);

  test('postgres: the sweep removes ended sets batch by batch, and their artifact chunks', async () => {
    const store = await pgStore();
    try {
      await sweepRemovesBytes(store, store.artifacts.blobs());
    } finally {
      await store.close();
    }
  });

  test('postgres: sweepers running at once take disjoint batches and remove each set once', async () => {
    const store = await pgStore();
    const others = [new PostgresStore({ connectionString: url, schema: store.schema }), new PostgresStore({ connectionString: url, schema: store.schema })];
    try {
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) {
        const set = newSet(2);
        ids.push(set.id);
        await store.sets.create(set);
      }
      for (const run of await store.claims.claimRuns({ workerId: 'w', limit: 60, leaseMs: 10_000 })) {
        await store.claims.finishRun(leaseOf(run), { status: 'SUCCESS', attempts: 1, error: null, output: '', durationMs: 1 });
      }
      const sweeps = await Promise.all([store, ...others].map((s) => removeEndedSets(s, store.artifacts.blobs(), { retentionMs: 0, now: Date.now() + 1000, batch: 4 })));
      assert.equal(sweeps.reduce((n, r) => n + r.sets, 0), 30, 'every set once, none twice');
      assert.equal(sweeps.reduce((n, r) => n + r.members, 0), 60);
      assert.deepEqual((await store.sets.getMany(ids)).length, 0);
    } finally {
      await Promise.all([store, ...others].map((s) => s.close()));
    }
  });

  test('postgres: the sweep\'s selection uses the ended-time index', async () => {
    const store = await pgStore();
    try {
      // An empty table is read whole whatever the indexes: forbid that to see which index serves.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('SET enable_seqscan = off');
        const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN SELECT id FROM "${store.schema}".test_run_sets WHERE ended_at < now() ORDER BY ended_at LIMIT 200`);
        assert.match(plan.rows.map((r) => r['QUERY PLAN']).join('\n'), /test_run_sets_ended/);
      } finally {
        await client.end();
      }
    } finally {
      await store.close();
    }
  });
});
