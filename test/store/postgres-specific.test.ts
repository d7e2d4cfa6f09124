/**
 * What only PostgreSQL has to prove: many processes (here: many stores, each
 * with its own pool) claiming at once, LISTEN/NOTIFY across instances and its
 * reconnection, concurrent migrations, and surviving killed connections.
 * Needs RUNSET_TEST_DATABASE_URL; skips, saying so, without it.
 */
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { PostgresStore, StoreUnavailableError } from '../../src/store/postgres/index.js';
import type { ClaimedRun } from '../../src/core/types.js';
import { newSet } from './fixtures.js';
import { leaseOf } from '../../src/store/store.js';

const url = process.env.RUNSET_TEST_DATABASE_URL ?? '';

describe('PostgreSQL store', { skip: url ? false : 'RUNSET_TEST_DATABASE_URL is not set' }, () => {
  const schemas: string[] = [];
  let open: PostgresStore[] = [];

  function freshSchema(): string {
    const schema = `runset_test_${randomBytes(6).toString('hex')}`;
    schemas.push(schema);
    return schema;
  }

  function store(schema: string, poolSize?: number): PostgresStore {
    const s = new PostgresStore({ connectionString: url, schema, ...(poolSize ? { poolSize } : {}) });
    open.push(s);
    return s;
  }

  async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  }

  async function backendPids(applicationName: string): Promise<number[]> {
    return admin(async (c) => {
      const { rows } = await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
      return rows.map((r) => r.pid);
    });
  }

  async function terminate(pids: number[]): Promise<void> {
    await admin((c) => c.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]));
  }

  afterEach(async () => {
    await Promise.all(open.map((s) => s.close()));
    open = [];
  });

  after(async () => {
    await admin(async (c) => {
      for (const schema of schemas) await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    });
  });

  /** A fresh schema holding one set of `members` members, and a store on it. */
  async function oneSet(members: number) {
    const schema = freshSchema();
    const s = store(schema);
    await s.migrate();
    const set = newSet(members);
    await s.sets.create(set);
    return { schema, s, set };
  }

  /** A fresh schema holding 10 sets of 100 members, and a store on it. */
  async function thousandMembers() {
    const schema = freshSchema();
    const setup = store(schema);
    await setup.migrate();
    const sets = Array.from({ length: 10 }, () => newSet(100));
    for (const set of sets) await setup.sets.create(set);
    return { schema, setup, sets };
  }

  test('8 claimers with their own pools take each of 1,000 members exactly once', { timeout: 60_000 }, async () => {
    const { schema, setup, sets } = await thousandMembers();
    const failing = new Set(sets.flatMap((set) => set.runs.filter((r) => r.position % 17 === 0).map((r) => r.id)));

    const claimed: ClaimedRun[] = [];
    const refused: string[] = [];
    const claimers = Array.from({ length: 8 }, () => store(schema, 3));
    await Promise.all(
      claimers.map(async (s, i) => {
        for (;;) {
          const batch = await s.claims.claimRuns({ workerId: `w${i}`, limit: 1 + Math.floor(Math.random() * 20), leaseMs: 60_000 });
          if (batch.length === 0) return;
          claimed.push(...batch);
          await s.claims.reapExpired(3); // contends for the same rows and sets; must neither deadlock nor reap live leases
          const results = await Promise.all(
            batch.map((run) => {
              const lease = leaseOf(run);
              const outcome = failing.has(run.id)
                ? { status: 'FAIL' as const, attempts: 1, error: 'no', output: '', durationMs: 1 }
                : { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 1 };
              return s.claims.finishRun(lease, outcome);
            }),
          );
          results.forEach((ours, k) => ours || refused.push(batch[k]!.id));
        }
      }),
    );

    assert.equal(claimed.length, 1000);
    assert.equal(new Set(claimed.map((c) => c.id)).size, 1000, 'no member was claimed twice');
    assert.deepEqual(refused, []);
    for (const set of sets) {
      const got = await setup.sets.get(set.id);
      const expectedFails = set.runs.filter((r) => failing.has(r.id)).length;
      assert.deepEqual(got?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 100 - expectedFails, FAIL: expectedFails });
      assert.equal(got?.status, expectedFails > 0 ? 'FAIL' : 'SUCCESS');
      assert.ok(got?.startedAt && got.endedAt && got.endedAt >= got.startedAt);
      const runs = await setup.sets.listRuns(set.id);
      assert.ok(runs.every((r) => r.status === (failing.has(r.id) ? 'FAIL' : 'SUCCESS')));
    }
  });

  test('8 slots with their own pools, each reserving its next member and now and then giving it back, run each of 1,000 members once', { timeout: 60_000 }, async () => {
    const { schema, setup, sets } = await thousandMembers();
    const ok = { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 1 };

    const ran: string[] = [];
    let givenBack = 0;
    const slots = Array.from({ length: 8 }, () => store(schema, 2));
    await Promise.all(
      slots.map(async (s, i) => {
        const workerId = `w${i}`;
        let [run, ahead] = await s.claims.claimRuns({ workerId, limit: 2, reserve: 1, leaseMs: 60_000 });
        while (run) {
          ran.push(run.id);
          if (ahead && Math.random() < 0.15) {
            // As a slot whose member ran long does: the reservation goes back for anyone.
            assert.equal(await s.claims.releaseRuns([leaseOf(ahead)]), 1);
            givenBack++;
            ahead = undefined;
          }
          const step = await s.claims.finishAndClaim(
            leaseOf(run),
            ok,
            ahead ? { workerId, limit: 1, reserve: 1, leaseMs: 60_000, start: leaseOf(ahead) } : { workerId, limit: 2, reserve: 1, leaseMs: 60_000 },
          );
          assert.equal(step.finished, true);
          await s.claims.reapExpired(3); // contends for the same rows and sets; must reap no live lease, reserved ones included
          if (ahead) {
            assert.equal(step.started, true);
            [run, ahead] = [ahead, step.claimed[0]];
          } else {
            [run, ahead] = step.claimed;
          }
        }
      }),
    );

    assert.equal(ran.length, 1000);
    assert.equal(new Set(ran).size, 1000, 'no member ran twice');
    assert.ok(givenBack > 0);
    for (const set of sets) {
      const got = await setup.sets.get(set.id);
      assert.deepEqual(got?.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 100, FAIL: 0 });
      assert.equal(got?.status, 'SUCCESS');
    }
  });

  test("one store's member moves take turns in the process; heartbeats do not wait for them", async () => {
    const { schema, s, set } = await oneSet(3);
    const [a, b, c] = await s.claims.claimRuns({ workerId: 'w', limit: 3, leaseMs: 60_000 });
    assert.ok(a && b && c);
    const ok = { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 1 };
    const waitingOnLocks = (): Promise<number> =>
      admin(async (c) => {
        const { rows } = await c.query<{ n: number }>(
          "SELECT count(*)::integer AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
          [`runset:${schema}`],
        );
        return rows[0]!.n;
      });

    // Another process holds the set's row: the first move waits for it in the database.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}".test_run_sets WHERE id = $1 FOR UPDATE`, [set.id]);
      const first = s.claims.finishRun(leaseOf(a), ok);
      const second = s.claims.finishRun(leaseOf(b), ok);
      await waitForValue(async () => ((await waitingOnLocks()) === 1 ? true : undefined)); // the first move waits on the set row
      assert.equal(await s.claims.heartbeat(leaseOf(c), 60_000, 1), true, 'a heartbeat is not queued behind moves');
      await sleep(300);
      assert.equal(await waitingOnLocks(), 1, 'the second move waits in the process, not on the row');
      await holder.query('COMMIT');
      assert.deepEqual(await Promise.all([first, second]), [true, true]);
    } finally {
      await holder.end();
    }
    assert.deepEqual((await s.sets.get(set.id))?.counts, { WAITING: 0, RUNNING: 1, SUCCESS: 2, FAIL: 0 });
  });

  test('NOTIFY wakes a listener on another instance, and only on the same schema', async () => {
    const schema = freshSchema();
    const listening = store(schema);
    await listening.migrate();
    const other = store(freshSchema());
    await other.migrate();

    let calls = 0;
    let otherCalls = 0;
    listening.claims.onRunsWaiting(() => calls++);
    other.claims.onRunsWaiting(() => otherCalls++);
    await waitFor(() => calls === 1 && otherCalls === 1); // each fires once when its LISTEN is in place

    await store(schema).claims.notifyRunsWaiting();
    await waitFor(() => calls === 2);
    await sleep(100);
    assert.equal(otherCalls, 1, 'another schema is another channel');
  });

  test('releasing and reaping wake listeners on other instances', async () => {
    const { schema, s: worker } = await oneSet(2);
    const [a, b] = await worker.claims.claimRuns({ workerId: 'w', limit: 2, leaseMs: 1 });

    let calls = 0;
    store(schema).claims.onRunsWaiting(() => calls++);
    await waitFor(() => calls === 1);
    await sleep(20);
    assert.equal(await worker.claims.releaseRuns([{ runId: a!.id, workerId: 'w', claim: a!.claim }]), 1);
    await waitFor(() => calls === 2);
    assert.deepEqual(await worker.claims.reapExpired(3), { requeued: 1, failed: 0 });
    await waitFor(() => calls === 3);
    assert.ok(b);
  });

  test('the listener reconnects after its connection is killed, and fires once when back', { timeout: 20_000 }, async () => {
    const schema = freshSchema();
    const listening = store(schema);
    await listening.migrate();
    let calls = 0;
    listening.claims.onRunsWaiting(() => calls++);
    await waitFor(() => calls === 1);

    const [before] = await backendPids(`runset-listen:${schema}`);
    assert.ok(before, 'the LISTEN connection is visible in pg_stat_activity');
    await terminate([before]);
    await waitFor(() => calls === 2, 10_000);
    const after = await backendPids(`runset-listen:${schema}`);
    assert.equal(after.length, 1);
    assert.notEqual(after[0], before);

    await store(schema).claims.notifyRunsWaiting();
    await waitFor(() => calls === 3);
  });

  test('four instances migrating one new schema at once all succeed', async () => {
    const schema = freshSchema();
    const stores = Array.from({ length: 4 }, () => store(schema));
    await Promise.all(stores.map((s) => s.migrate()));
    await stores[0]!.migrate();
    const versions = await admin(async (c) => (await c.query<{ version: number }>(`SELECT version FROM "${schema}".schema_migrations ORDER BY version`)).rows);
    const expected = [...POSTGRES_MIGRATIONS].map((m) => ({ version: m.version })).sort((a, b) => a.version - b.version);
    assert.deepEqual(versions, expected, 'every migration applied exactly once');
    const set = newSet(1);
    await stores[1]!.sets.create(set);
    assert.equal((await stores[2]!.sets.get(set.id))?.status, 'WAITING');
  });

  test('the pool survives killed idle connections', async () => {
    const schema = freshSchema();
    const errors: Error[] = [];
    const s = new PostgresStore({ connectionString: url, schema, poolSize: 2, onError: (e) => errors.push(e) });
    open.push(s);
    await s.migrate();
    const set = newSet(1);
    await s.sets.create(set);
    await terminate(await backendPids(`runset:${schema}`));
    await waitFor(() => errors.length > 0);
    assert.equal((await s.sets.get(set.id))?.id, set.id);
  });

  test('a connection killed mid-transaction surfaces as StoreUnavailableError, and nothing is half-written', async () => {
    const schema = freshSchema();
    const s = store(schema, 2);
    await s.migrate();
    const set = newSet(1);
    await s.sets.create(set);
    const [run] = await s.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 60_000 });
    const lease = { runId: run!.id, workerId: 'w', claim: run!.claim };
    const ok = { status: 'SUCCESS' as const, attempts: 1, error: null, output: '', durationMs: 1 };

    // Hold the set row so finishRun blocks inside its transaction, then kill its backend.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}".test_run_sets WHERE id = $1 FOR UPDATE`, [set.id]);
      // Settle into a value at once: the rejection may come before we look at it.
      const finishing = s.claims.finishRun(lease, ok).then(
        () => new Error('finishRun should have failed'),
        (e: unknown) => e,
      );
      const blocked = await waitForValue(() =>
        admin(async (c) => {
          const { rows } = await c.query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
            [`runset:${schema}`],
          );
          return rows[0]?.pid;
        }),
      );
      await terminate([blocked]);
      const err = await finishing;
      assert.ok(err instanceof StoreUnavailableError, String(err));
      assert.equal(err.transient, true);
      assert.equal((err.cause as { code?: string }).code, '57P01');
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    assert.equal((await s.sets.listRuns(set.id))[0]?.status, 'RUNNING', 'the killed transaction rolled back');
    assert.equal(await s.claims.finishRun(lease, ok), true, 'the retry succeeds');
    assert.equal((await s.sets.get(set.id))?.status, 'SUCCESS');
  });

  test('an unreachable server is a StoreUnavailableError carrying the socket error', async () => {
    const s = new PostgresStore({ connectionString: 'postgres://postgres@127.0.0.1:1/test', schema: freshSchema() });
    open.push(s);
    const err = await s.sets.get('x').then(
      () => assert.fail('should not connect'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof StoreUnavailableError, String(err));
    assert.equal((err.cause as { code?: string }).code, 'ECONNREFUSED');
  });

  test('a schema name that is not a plain identifier is refused', () => {
    for (const schema of ['', 'Runset', 'a-b', 'x"; DROP TABLE y; --', '1abc', 'a'.repeat(49)]) {
      assert.throws(() => new PostgresStore({ connectionString: url, schema }), /invalid PostgreSQL schema name/);
    }
  });

  test('close() leaves no socket or timer behind', async () => {
    const baseline = handles();
    const s = new PostgresStore({ connectionString: url, schema: freshSchema() });
    await s.migrate();
    let woke = false;
    s.claims.onRunsWaiting(() => (woke = true));
    await waitFor(() => woke);
    assert.ok(handles() > baseline);
    await s.close();
    await s.close();
    await waitFor(() => handles() <= baseline);
    await assert.rejects(s.sets.get('x'), (err) => !(err instanceof StoreUnavailableError), 'a closed store is not an outage');
  });
});

function handles(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap' || r === 'Timeout').length;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await sleep(10);
  }
}

async function waitForValue<T>(probe: () => Promise<T | undefined>, timeoutMs = 3000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('value not seen in time');
    await sleep(10);
  }
}
