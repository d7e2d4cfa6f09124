/**
 * --pool-size bounds a process's PostgreSQL connections: a store opened as the
 * CLI opens it (openStore) with a pool of N, under far more concurrent work than
 * N, never holds more than N pooled connections, plus its one LISTEN connection,
 * counted from pg_stat_activity by application name.
 * Needs RUNSET_TEST_DATABASE_URL; skips, saying so, without it.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { openStore } from '../../src/store/open.js';
import { dropSchemas, newSchemaName, NO_DATABASE, query, TEST_DATABASE_URL } from '../helpers/postgres.js';

describe('--pool-size', { skip: TEST_DATABASE_URL ? false : NO_DATABASE }, () => {
  const url = TEST_DATABASE_URL ?? '';
  const schema = newSchemaName('runset_pool');
  after(() => dropSchemas(url, [schema]));

  const connections = async (applicationName: string): Promise<number> => {
    const [row] = await query<{ n: number }>(url, 'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
    return row?.n ?? 0;
  };

  test('a pool of 3 never holds more than 3 connections under 60 concurrent reads, and LISTEN holds one', async () => {
    const store = await openStore({ databaseUrl: url, databaseSchema: schema, dataDir: tmpdir(), poolSize: 3 });
    // A worker listens for wake-ups: that opens the LISTEN connection, the one outside the pool.
    const stopListening = store.claims.onRunsWaiting(() => undefined);
    try {
      const seen: number[] = [];
      let busy = true;
      const sampler = (async () => {
        while (busy) seen.push(await connections(`runset:${schema}`));
      })();
      for (let round = 0; round < 5; round++) {
        await Promise.all(Array.from({ length: 60 }, () => store.setViews.list({ limit: 50 })));
        await Promise.all(Array.from({ length: 60 }, () => store.sets.get(randomUUID())));
      }
      busy = false;
      await sampler;
      assert.ok(seen.length > 0);
      assert.ok(Math.max(...seen) <= 3, `pooled connections seen: ${seen.join(', ')}`);
      assert.equal(await connections(`runset:${schema}`), 3, 'the burst filled the pool to its bound and no further');
      for (let i = 0; i < 50 && (await connections(`runset-listen:${schema}`)) === 0; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(await connections(`runset-listen:${schema}`), 1, 'one LISTEN connection besides the pool');
    } finally {
      stopListening();
      await store.close();
    }
  });
});
