/**
 * The worker pool's outcome writes, against a real SQLite store whose
 * finishAndClaim fails on demand: a store that is unavailable for a moment is
 * retried; any other error is not (trying again cannot mend a bug or a refused
 * move).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pino from 'pino';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { StoreUnavailableError } from '../../src/store/postgres/connection.js';
import type { Store } from '../../src/store/store.js';
import { executorRegistry } from '../../src/main.js';
import { WorkerPool } from '../../src/scheduler/pool.js';
import { newSet } from '../store/contract.js';
import { tempDir } from '../helpers/server.js';

async function runOneMember(failures: Error[]): Promise<{ status: string | undefined; attempts: number }> {
  const real = new SqliteStore(path.join(tempDir('runset-pool-'), 'runset.db'), { owner: true });
  await real.migrate();
  let attempts = 0;
  const store = new Proxy(real, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== 'finishAndClaim') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      return (...args: Parameters<Store['finishAndClaim']>) => {
        const failure = failures[attempts++];
        return failure ? Promise.reject(failure) : target.finishAndClaim(...args);
      };
    },
  }) as Store;
  const set = newSet(1);
  await real.createSet(set);
  const pool = new WorkerPool({
    store,
    executors: executorRegistry(),
    resolveVariables: () => ({ values: {}, secrets: [] }),
    logger: pino({ level: 'silent' }),
    concurrency: 1,
    leaseMs: 10_000,
    maxLostLeases: 3,
    pollMs: 60_000,
  });
  pool.start();
  const until = Date.now() + 10_000;
  while (attempts <= failures.length && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  await new Promise((resolve) => setTimeout(resolve, 100));
  await pool.stop(0);
  const status = (await real.getSet(set.id))?.status;
  await real.close();
  return { status, attempts };
}

test('an outcome write is retried while the store is unavailable, then lands', async () => {
  const unavailable = () => new StoreUnavailableError('PostgreSQL is unavailable: connection refused', { cause: new Error('ECONNREFUSED') });
  const { status, attempts } = await runOneMember([unavailable(), unavailable()]);
  assert.equal(attempts, 3, 'two failures, then the write that lands');
  assert.equal(status, 'SUCCESS');
});

test('an outcome write that fails for another reason is not retried', async () => {
  const { status, attempts } = await runOneMember([new Error('illegal member move WAITING → SUCCESS')]);
  assert.equal(attempts, 1, 'tried once');
  assert.notEqual(status, 'SUCCESS', 'nothing was written');
});
