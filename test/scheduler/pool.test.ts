/**
 * The worker pool against a real SQLite store:
 * - outcome writes, with a finishAndClaim that fails on demand: a store that is
 *   unavailable for a moment is retried; any other error is not (trying again
 *   cannot mend a bug or a refused move);
 * - a slot's reservation of its next member: taken at once while members are
 *   short, given back for another worker while the current one runs long, and
 *   never left leased by a shutdown.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { storeLink } from '../../src/worker-link/store-link.js';
import { FileBlobStore } from '../../src/artifacts/blobs.js';
import { StoreUnavailableError } from '../../src/store/postgres/connection.js';
import type { ClaimsStore, NextClaim, Store } from '../../src/store/store.js';
import type { CommandTestSpec, Executor, TestRunRecord, TestType } from '../../src/core/types.js';
import { caseSpec } from '../store/batch-contract.js';
import { executorRegistry } from '../../src/roles/worker.js';
import { WorkerPool } from '../../src/scheduler/pool.js';
import { newSet } from '../store/fixtures.js';
import { tempDir } from '../helpers/server.js';

async function freshStore(): Promise<SqliteStore> {
  const store = new SqliteStore(path.join(tempDir('runset-pool-'), 'runset.db'), { owner: true });
  await store.migrate();
  return store;
}

type Wrappers = { [K in keyof ClaimsStore]?: (real: ClaimsStore[K]) => ClaimsStore[K] };

/** The store, with the named claims methods wrapped (each wrapper gets the real method, bound). */
function intercept(real: SqliteStore, wrappers: Wrappers): Store {
  const claims = new Proxy(real.claims, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      const bound = typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      const wrap = wrappers[prop as keyof ClaimsStore] as ((real: unknown) => unknown) | undefined;
      return wrap ? wrap(bound) : bound;
    },
  });
  return new Proxy(real, { get: (target, prop, receiver) => (prop === 'claims' ? claims : (Reflect.get(target, prop, receiver) as unknown)) });
}

/**
 * One registry for every pool here, as one process has: each command executor
 * starts its own launcher process, whose first command pays its start (about
 * 150 ms), longer than a slot's hold-ahead, which would change what these tests watch.
 */
const registry = executorRegistry();

/** A one-slot pool on `store`, running commands for real (and whatever `executors` adds). */
function poolOn(store: Store, workerId?: string, executors: Executor[] = [], workDir?: string): WorkerPool {
  return new WorkerPool({
    workDir,
    link: storeLink({ store, blobs: new FileBlobStore(tempDir('runset-pool-blobs-')), workerStaleMs: 60_000, logger: pino({ level: 'silent' }) }),
    reap: () => store.claims.reapExpired(3),
    executors: new Map([...registry, ...executors.map((e): [TestType, Executor] => [e.type, e])]),
    resolveVariables: () => ({ values: {}, secrets: [] }),
    logger: pino({ level: 'silent' }),
    concurrency: 1,
    leaseMs: 10_000,
    pollMs: 60_000,
    workerId,
  });
}

async function runOneMember(failures: Error[]): Promise<{ status: string | undefined; attempts: number; limits: number[] }> {
  const real = await freshStore();
  let attempts = 0;
  const limits: number[] = [];
  const store = intercept(real, {
    finishAndClaim: (finishAndClaim) => (...args) => {
      limits.push(args[2].limit);
      const failure = failures[attempts++];
      return failure ? Promise.reject(failure) : finishAndClaim(...args);
    },
  });
  const set = newSet(1);
  await real.sets.create(set);
  const pool = poolOn(store);
  pool.start();
  const until = Date.now() + 10_000;
  while (attempts < failures.length && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  // Time for retries (backoff 25–100 ms each) to happen, or not.
  await new Promise((resolve) => setTimeout(resolve, 500));
  await pool.stop(0);
  const status = (await real.sets.get(set.id))?.status;
  await real.close();
  return { status, attempts, limits };
}

test('an outcome write is retried while the store is unavailable, then lands', async () => {
  const unavailable = () => new StoreUnavailableError('PostgreSQL is unavailable: connection refused', { cause: new Error('ECONNREFUSED') });
  const { status, attempts } = await runOneMember([unavailable(), unavailable()]);
  assert.equal(attempts, 3, 'two failures, then the write that lands');
  assert.equal(status, 'SUCCESS');
});

test('a retried outcome write claims nothing: the first try may have claimed already, its answer lost', async () => {
  const unavailable = () => new StoreUnavailableError('PostgreSQL is unavailable: connection reset', { cause: new Error('ECONNRESET') });
  const { status, limits } = await runOneMember([unavailable()]);
  assert.equal(status, 'SUCCESS');
  assert.ok(limits[0]! > 0, 'the first try claims on');
  assert.deepEqual(limits.slice(1), [0], 'the retry does not');
});

test('an outcome write that fails for another reason is not retried', async () => {
  const { status, attempts } = await runOneMember([new Error('illegal member move WAITING → SUCCESS')]);
  assert.equal(attempts, 1, 'tried once');
  assert.notEqual(status, 'SUCCESS', 'nothing was written');
});

/** A SQLite store, a pool factory on it, and the store calls the pools made (finishAndClaim's `next`, releases). */
async function reservationFixture() {
  const store = await freshStore();
  const steps: NextClaim[] = [];
  const released: string[] = [];
  const watched = intercept(store, {
    finishAndClaim: (finishAndClaim) => (lease, outcome, next) => {
      steps.push(next);
      return finishAndClaim(lease, outcome, next);
    },
    releaseRuns: (releaseRuns) => (leases) => {
      released.push(...leases.map((l) => l.runId));
      return releaseRuns(leases);
    },
  });
  return { store, steps, released, pool: (workerId: string, executors?: Executor[], workDir?: string) => poolOn(watched, workerId, executors, workDir) };
}

/** A set whose members run these argvs, in order. */
function commandSet(...runs: string[][]) {
  const set = newSet(runs.length);
  set.runs.forEach((run, i) => ((run.spec as CommandTestSpec).run = runs[i]!));
  return set;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const ended = (store: SqliteStore, id: string) => async () => {
  const s = await store.sets.get(id);
  return s?.status === 'SUCCESS' || s?.status === 'FAIL' ? s : undefined;
};

test('a slot running short members starts each reserved next member at once, and runs every member once', async () => {
  const { store, steps, pool } = await reservationFixture();
  const set = commandSet(...Array.from({ length: 12 }, () => ['true']));
  await store.sets.create(set);
  const worker = pool('w1');
  worker.start();
  const done = await waitFor('the set to end', ended(store, set.id));
  await worker.stop(0);
  assert.equal(done.status, 'SUCCESS');
  assert.deepEqual(done.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 12, FAIL: 0 });
  // The first member came from a plain claim; from the second on, each began as the one reserved for the slot.
  const starts = steps.filter((s) => s.start !== undefined).length;
  assert.ok(starts >= 8, `${starts} of ${steps.length} steps started a reserved member`);
  assert.ok((await store.sets.listRuns(set.id)).every((r: TestRunRecord) => r.attempts === 1 && r.startedAt !== null));
  await store.close();
});

test('a reservation held while the current member runs long is given back, and an idle worker runs it', async () => {
  const { store, released, pool } = await reservationFixture();
  const set = commandSet(['true'], ['sleep', '1.5'], ['true']);
  await store.sets.create(set);
  const busy = pool('busy');
  busy.start();
  const [, long, reserved] = set.runs.map((r) => r.id);
  await waitFor('the long member to run', async () => ((await store.sets.listRuns(set.id))[1]?.status === 'RUNNING' ? true : undefined));
  const idle = pool('idle');
  idle.start();
  const done = await waitFor('the set to end', ended(store, set.id));
  await Promise.all([busy.stop(0), idle.stop(0)]);
  assert.equal(done.status, 'SUCCESS');
  assert.ok(released.includes(reserved!), 'the busy slot gave its reservation back');
  assert.ok(!released.includes(long!));
  const runs = await store.sets.listRuns(set.id);
  assert.ok(Date.parse(runs[2]!.startedAt!) < Date.parse(runs[1]!.endedAt!), 'the reserved member did not wait for the long one');
  await store.close();
});

test('a shutdown leaves nothing leased: the running member and the reserved one are both back to WAITING', async () => {
  const { store, pool } = await reservationFixture();
  const set = commandSet(['true'], ['sleep', '5'], ['true']);
  await store.sets.create(set);
  const worker = pool('w1');
  worker.start();
  await waitFor('the long member to run', async () => ((await store.sets.listRuns(set.id))[1]?.status === 'RUNNING' ? true : undefined));
  await worker.stop(0);
  assert.deepEqual((await store.sets.listRuns(set.id)).map((r) => r.status), ['SUCCESS', 'WAITING', 'WAITING']);
  const other = await store.claims.claimRuns({ workerId: 'w2', limit: 5, leaseMs: 10_000 });
  assert.deepEqual(other.map((r) => r.spec.name), ['t1', 't2'], 'both are free for any worker');
  await store.close();
});

/** Stands in for Playwright: reports every case of the batch begun and passed, and records each batch's cases. */
function fakePlaywright(batches: string[][]): Executor {
  return {
    type: 'playwright',
    run: () => Promise.reject(new Error('batched members must not be run one by one')),
    runBatch: (specs, ctx) => {
      batches.push(specs.map((s) => s.name));
      specs.forEach((_, i) => {
        ctx.onBegin(i, 1);
        ctx.onEnd(i, { passed: true, error: null, output: '', attempts: 1, durationMs: 1, artifacts: [] });
      });
      return Promise.resolve();
    },
  };
}

test('a reserved member that belongs to a batch is handed to a batch run, not run by the slot', async () => {
  const { store, pool } = await reservationFixture();
  const batches: string[][] = [];
  const set = commandSet(['true'], ['true'], ['true'], ['true']);
  set.runs[2]!.spec = caseSpec('first case');
  set.runs[3]!.spec = caseSpec('second case');
  await store.sets.create(set);
  const worker = pool('w1', [fakePlaywright(batches)]);
  worker.start();
  const done = await waitFor('the set to end', ended(store, set.id));
  await worker.stop(0);
  assert.equal(done.status, 'SUCCESS');
  assert.deepEqual(done.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 4, FAIL: 0 });
  assert.deepEqual(batches, [['a.spec.ts › first case', 'a.spec.ts › second case']], 'both cases ran in one batch');
  await store.close();
});

test('a batch whose scratch folder cannot be made fails its members, saying why, instead of leaving them leased', async () => {
  const { store, pool } = await reservationFixture();
  const batches: string[][] = [];
  const set = newSet(2);
  set.runs[0]!.spec = caseSpec('first case');
  set.runs[1]!.spec = caseSpec('second case');
  await store.sets.create(set);
  const notAFolder = path.join(tempDir('runset-pool-'), 'a-file');
  writeFileSync(notAFolder, '');
  const worker = pool('w1', [fakePlaywright(batches)], notAFolder);
  worker.start();
  const done = await waitFor('the set to end', ended(store, set.id));
  await worker.stop(0);
  assert.equal(done.status, 'FAIL');
  assert.deepEqual(batches, [], 'nothing ran');
  for (const run of await store.sets.listRuns(set.id)) assert.match(run.error ?? '', /cannot make the batch's scratch folder under .*a-file/);
  await store.close();
});
