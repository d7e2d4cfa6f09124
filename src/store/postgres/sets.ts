/**
 * The PostgreSQL side of the sets sub-store: a set and its members created in
 * one transaction (once per Idempotency-Key), read, and cancelled
 * (./cancel.ts). What people read about a set is ./set-views.ts's. The rules
 * of ./statements.ts hold.
 */
import type pg from 'pg';
import type { NewTestRunSet, SetControl, TestRunRecord, TestRunSetRecord } from '../../core/types.js';
import { batchKeyOf } from '../../core/batch.js';
import { deadlineOf } from '../../core/deadlines.js';
import type { CancelRequest, CancelResult, CreatedOnce, IdempotencyClaim, SetsStore } from '../sets.js';
import { rowMappers } from '../rows.js';
import { olderInGroupSql } from '../queue.js';
import { withClient, withTransaction, type Queryable } from './connection.js';
import * as cancels from './cancel.js';
import { msFromNow, SET_COLUMNS, type Names, type RunRow, type SetRow } from './statements.js';

/** PostgreSQL returns timestamps as Dates. */
const { toSet, toRun } = rowMappers<Date>((value) => value.toISOString());

const RUN_COLUMNS = 'id, set_id, position, name, type, status, attempts, started_at, ended_at, duration_ms, error, output, ran_on, worker_id, expected_ms, skipped, quarantined, result_cases, starts, lost_starts';

export class PostgresSets implements SetsStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly n: Names,
  ) {}

  create(set: NewTestRunSet): Promise<void> {
    return withTransaction(this.pool, async (tx) => {
      await insertSetWithRuns(tx, this.n, set);
    });
  }

  createOnce(set: NewTestRunSet, idem: IdempotencyClaim): Promise<CreatedOnce> {
    return withTransaction(this.pool, async (tx) => {
      await deleteExpiredIdempotency(tx, this.n);
      const taken = await takeIdempotencyKey(tx, this.n, { ...idem, setId: set.id });
      if (!taken) {
        const earlier = await findIdempotencyKey(tx, this.n, idem.keyId, idem.key);
        if (!earlier) throw new Error('idempotency key vanished between insert and read');
        return { setId: earlier.set_id, bodyHash: earlier.body_hash, created: false };
      }
      await insertSetWithRuns(tx, this.n, set);
      return { setId: set.id, bodyHash: idem.bodyHash, created: true };
    });
  }

  async findCreatedOnce(keyId: string, key: string): Promise<{ setId: string; bodyHash: string } | undefined> {
    const row = await withClient(this.pool, (q) => findIdempotencyKey(q, this.n, keyId, key));
    return row && { setId: row.set_id, bodyHash: row.body_hash };
  }

  async get(id: string): Promise<TestRunSetRecord | undefined> {
    const row = await withClient(this.pool, (q) => getSet(q, this.n, id));
    return row ? toSet(row) : undefined;
  }

  async getMany(ids: readonly string[]): Promise<TestRunSetRecord[]> {
    if (ids.length === 0) return [];
    return (await withClient(this.pool, (q) => getSets(q, this.n, ids))).map(toSet);
  }

  async listRuns(setId: string): Promise<TestRunRecord[]> {
    return (await withClient(this.pool, (q) => listRuns(q, this.n, setId))).map(toRun);
  }

  cancel(setId: string, req: CancelRequest): Promise<CancelResult> {
    return withTransaction(this.pool, async (tx) => {
      const { found, ended } = await cancels.cancelMembers(tx, this.n, setId, req.error);
      if (!found) return { found: false };
      // No unfinished member: the set had ended (its status follows its members).
      if (ended === 0) return { found: true, cancelled: false };
      await cancels.markCancelled(tx, this.n, setId, req);
      return { found: true, cancelled: true };
    });
  }

  control(setId: string): Promise<SetControl | null> {
    return withClient(this.pool, (q) => cancels.setControl(q, this.n, setId));
  }

  async olderInGroup(setId: string): Promise<string[]> {
    const { rows } = await withClient(this.pool, (q) => q.query<{ id: string }>({ name: 'runset.olderInGroup', text: olderInGroupSql(this.n.sets, 'queue_seq', '$1'), values: [setId] }));
    return rows.map((r) => r.id);
  }

  async overdue(limit: number): Promise<Array<{ id: string; timeoutSeconds: number }>> {
    const { rows } = await withClient(this.pool, (q) =>
      q.query<{ id: string; timeout_seconds: number }>({
        name: 'runset.overdueSets',
        text: `
          SELECT id, timeout_seconds FROM ${this.n.sets}
          WHERE status IN ('WAITING', 'RUNNING') AND deadline_at IS NOT NULL AND deadline_at <= now()
          ORDER BY deadline_at LIMIT $1`,
        values: [limit],
      }),
    );
    return rows.map((r) => ({ id: r.id, timeoutSeconds: r.timeout_seconds }));
  }
}

async function insertSet(q: Queryable, n: Names, set: NewTestRunSet): Promise<void> {
  await q.query({
    name: 'runset.insertSet',
    text: `
      INSERT INTO ${n.sets} (id, env, status, created_at, count_waiting, variables, overrides, key_id, max_failures, labels, suite, selection, max_concurrent,
        timeout_seconds, deadline_at, concurrency_group)
      VALUES ($1, $2, 'WAITING', $3, $4, $5::json, $6::json, $7, $8, $9::jsonb, $10, $11::jsonb, $12, $13, $14, $15)`,
    values: [
      set.id, set.env, set.createdAt, set.runs.length, JSON.stringify(set.variables), JSON.stringify(set.overrides), set.keyId, set.maxFailures, JSON.stringify(set.labels),
      set.suiteVersion ?? null, set.select ? JSON.stringify(set.select) : null, set.maxConcurrentSets ?? null,
      set.timeoutSeconds ?? null, set.timeoutSeconds ? deadlineOf(set.createdAt, set.timeoutSeconds) : null, set.concurrencyGroup ?? null,
    ],
  });
}

/** All members in one statement, in the given order (which is their claim order). */
async function insertRuns(q: Queryable, n: Names, set: NewTestRunSet): Promise<void> {
  const runs = set.runs;
  await q.query({
    name: 'runset.insertRuns',
    text: `
      INSERT INTO ${n.runs} (id, set_id, env, position, name, type, spec, status, batch_key, expected_ms, quarantined, fail_on_flaky)
      SELECT u.id, $1, $9, u.position, u.name, u.type, u.spec, 'WAITING', u.batch_key, u.expected_ms, u.quarantined, u.fail_on_flaky
      FROM unnest($2::text[], $3::integer[], $4::text[], $5::text[], $6::json[], $7::text[], $8::integer[], $10::boolean[], $11::boolean[])
        WITH ORDINALITY AS u(id, position, name, type, spec, batch_key, expected_ms, quarantined, fail_on_flaky, ord)
      ORDER BY u.ord`,
    values: [
      set.id,
      runs.map((r) => r.id),
      runs.map((r) => r.position),
      runs.map((r) => r.spec.name),
      runs.map((r) => r.spec.type),
      runs.map((r) => JSON.stringify(r.spec)),
      runs.map((r) => batchKeyOf(r.spec)),
      runs.map((r) => Math.round(r.expectedMs)),
      set.env,
      runs.map((r) => r.quarantined),
      runs.map((r) => r.failOnFlaky),
    ],
  });
}

/**
 * A new set and its members (inside the caller's transaction). A set of an
 * environment with a limit, or with a concurrency group, takes the
 * environment's queue lock first, held to the commit: its queue number
 * (queue_seq, given by the insert) is then never below that of a set committed
 * after it, which keeps every place a claim saw and lets the newest set of a
 * group see every older one (src/store/queue.ts).
 */
async function insertSetWithRuns(q: Queryable, n: Names, set: NewTestRunSet): Promise<void> {
  if (set.maxConcurrentSets != null || set.concurrencyGroup != null) {
    await q.query({ name: 'runset.queueLock', text: 'SELECT pg_advisory_xact_lock(hashtext($1))', values: [`${n.sets} queue ${set.env}`] });
  }
  await insertSet(q, n, set);
  if (set.runs.length > 0) await insertRuns(q, n, set);
}

async function getSet(q: Queryable, n: Names, id: string): Promise<SetRow | undefined> {
  const { rows } = await q.query<SetRow>({
    name: 'runset.getSet',
    text: `SELECT ${SET_COLUMNS} FROM ${n.sets} WHERE id = $1`,
    values: [id],
  });
  return rows[0];
}

/** The sets among `ids` that exist (the text id column takes malformed ones and finds nothing). */
async function getSets(q: Queryable, n: Names, ids: readonly string[]): Promise<SetRow[]> {
  const { rows } = await q.query<SetRow>({
    name: 'runset.getSets',
    text: `SELECT ${SET_COLUMNS} FROM ${n.sets} WHERE id = ANY($1::text[])`,
    values: [[...new Set(ids)]],
  });
  return rows;
}

async function listRuns(q: Queryable, n: Names, setId: string): Promise<RunRow[]> {
  const { rows } = await q.query<RunRow>({
    name: 'runset.listRuns',
    text: `SELECT ${RUN_COLUMNS} FROM ${n.runs} WHERE set_id = $1 ORDER BY position`,
    values: [setId],
  });
  return rows;
}

// ── Idempotency-Key on create ──
// The insert races safely: of two transactions with one key, the second waits
// on the primary key, then finds the first's row and creates nothing.

async function deleteExpiredIdempotency(q: Queryable, n: Names): Promise<void> {
  await q.query({ name: 'runset.idem.deleteExpired', text: `DELETE FROM ${n.idempotency} WHERE expires_at <= now()` });
}

/** Takes the key for `setId`; false when it was already taken (and not expired). */
async function takeIdempotencyKey(q: Queryable, n: Names, args: IdempotencyClaim & { setId: string }): Promise<boolean> {
  const { rowCount } = await q.query({
    name: 'runset.idem.take',
    text: `
      INSERT INTO ${n.idempotency} (key_id, key, body_hash, set_id, expires_at)
      VALUES ($1, $2, $3, $4, ${msFromNow('$5')})
      ON CONFLICT (key_id, key) DO NOTHING`,
    values: [args.keyId, args.key, args.bodyHash, args.setId, args.ttlMs],
  });
  return rowCount === 1;
}

async function findIdempotencyKey(q: Queryable, n: Names, keyId: string, key: string): Promise<{ set_id: string; body_hash: string } | undefined> {
  const { rows } = await q.query<{ set_id: string; body_hash: string }>({
    name: 'runset.idem.find',
    text: `SELECT set_id, body_hash FROM ${n.idempotency} WHERE key_id = $1 AND key = $2 AND expires_at > now()`,
    values: [keyId, key],
  });
  return rows[0];
}
