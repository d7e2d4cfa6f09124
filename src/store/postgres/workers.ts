/**
 * The PostgreSQL side of the workers sub-store: the registry of live worker
 * processes (what shares are sized from, src/scheduler/shares.ts) and the
 * queue figures a metrics scrape reads, each served by an index (see
 * migrations.ts). The rules of ./statements.ts hold.
 */
import type pg from 'pg';
import type { BatchWorker, NewWorker, QueueStats, WorkerInfo, WorkersStore } from '../workers.js';
import { assembleWorkers, type LeasedRunRow, type WorkerRow } from '../rows.js';
import { withClient, type Queryable } from './connection.js';
import type { Names } from './statements.js';
import { queuedByEnvSql } from '../queue.js';

export class PostgresWorkers implements WorkersStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly n: Names,
  ) {}

  register(worker: NewWorker): Promise<boolean> {
    return withClient(this.pool, (q) => registerWorker(q, this.n, worker));
  }

  heartbeat(id: string, keyId: string | null = null): Promise<boolean> {
    return withClient(this.pool, (q) => heartbeatWorker(q, this.n, id, keyId));
  }

  async remove(id: string, keyId: string | null = null): Promise<void> {
    await withClient(this.pool, (q) => removeWorker(q, this.n, id, keyId));
  }

  batchWorkers(setId: string, batchKey: string, staleMs: number): Promise<BatchWorker[]> {
    return withClient(this.pool, (q) => batchWorkers(q, this.n, setId, batchKey, staleMs));
  }

  list(staleMs: number): Promise<WorkerInfo[]> {
    return withClient(this.pool, (q) => listWorkers(q, this.n, staleMs));
  }

  queueStats(staleMs: number): Promise<QueueStats> {
    return withClient(this.pool, (q) => queueStats(q, this.n, staleMs));
  }
}

async function registerWorker(q: Queryable, n: Names, w: NewWorker): Promise<boolean> {
  const res = await q.query({
    name: 'runset.registerWorker',
    text: `
      INSERT INTO ${n.workers} AS w (id, host, pid, slots, key_id) VALUES ($1, $2, $3, $4, $5)
      ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), slots = EXCLUDED.slots WHERE w.key_id IS NOT DISTINCT FROM EXCLUDED.key_id`,
    values: [w.id, w.host, w.pid, w.slots, w.keyId ?? null],
  });
  return res.rowCount === 1;
}

async function heartbeatWorker(q: Queryable, n: Names, id: string, keyId: string | null): Promise<boolean> {
  const res = await q.query({
    name: 'runset.heartbeatWorker',
    text: `UPDATE ${n.workers} SET heartbeat_at = now() WHERE id = $1 AND key_id IS NOT DISTINCT FROM $2`,
    values: [id, keyId],
  });
  return res.rowCount === 1;
}

async function removeWorker(q: Queryable, n: Names, id: string, keyId: string | null): Promise<void> {
  await q.query({ name: 'runset.removeWorker', text: `DELETE FROM ${n.workers} WHERE id = $1 AND key_id IS NOT DISTINCT FROM $2`, values: [id, keyId] });
}

/** Drops stale rows, then lists the rest with what each holds of one batch: one statement. */
async function batchWorkers(q: Queryable, n: Names, setId: string, batchKey: string, staleMs: number): Promise<BatchWorker[]> {
  const { rows } = await q.query<BatchWorker & { held_ms: number }>({
    name: 'runset.batchWorkers',
    text: `
      WITH dropped AS (
        DELETE FROM ${n.workers} WHERE heartbeat_at < now() - make_interval(secs => $1::double precision / 1000) RETURNING id
      ), holding AS (
        -- Served by the partial index test_runs_leased: only held members have a lease.
        SELECT worker_id, count(*)::integer AS n, COALESCE(sum(expected_ms), 0)::integer AS ms FROM ${n.runs}
        WHERE lease_expires_at IS NOT NULL AND set_id = $2 AND batch_key = $3 GROUP BY worker_id
      )
      SELECT w.id, w.host, w.slots, COALESCE(h.n, 0) AS holding, COALESCE(h.ms, 0) AS held_ms
      FROM ${n.workers} w LEFT JOIN holding h ON h.worker_id = w.id
      WHERE w.id NOT IN (SELECT id FROM dropped)
      ORDER BY w.host, w.id`,
    values: [staleMs, setId, batchKey],
  });
  return rows.map(({ held_ms, ...w }) => ({ ...w, heldMs: held_ms }));
}

/** Live workers (read only: dropping stale rows is batchWorkers' job) and the members each holds. */
async function listWorkers(q: Queryable, n: Names, staleMs: number): Promise<WorkerInfo[]> {
  type Stamped<R, K extends keyof R> = Omit<R, K> & { [P in K]: R[P] extends string ? Date : Date | null };
  const workers = await q.query<Stamped<WorkerRow, 'started_at' | 'heartbeat_at'>>({
    name: 'runset.listWorkers',
    text: `
      SELECT id, host, pid, slots, started_at, heartbeat_at FROM ${n.workers}
      WHERE heartbeat_at >= now() - make_interval(secs => $1::double precision / 1000)
      ORDER BY host, started_at, id`,
    values: [staleMs],
  });
  if (workers.rows.length === 0) return [];
  // Served by the partial index test_runs_leased: only held members have a lease.
  const leased = await q.query<Stamped<LeasedRunRow, 'started_at'>>({
    name: 'runset.leasedRuns',
    text: `SELECT id, set_id, name, type, status, started_at, worker_id FROM ${n.runs} WHERE lease_expires_at IS NOT NULL`,
  });
  return assembleWorkers(
    workers.rows.map((w) => ({ ...w, started_at: w.started_at.toISOString(), heartbeat_at: w.heartbeat_at.toISOString() })),
    leased.rows.map((r) => ({ ...r, started_at: r.started_at?.toISOString() ?? null })),
  );
}

/** One statement, each figure served by an index. */
async function queueStats(q: Queryable, n: Names, staleMs: number): Promise<QueueStats> {
  const { rows } = await q.query<QueueStats>({
    name: 'runset.queueStats',
    // Unfinished sets through test_run_sets_status_recent, their counts rather than a COUNT over members.
    text: `
      SELECT
        (SELECT COALESCE(sum(count_waiting), 0)::integer FROM ${n.sets} WHERE status IN ('WAITING', 'RUNNING')) AS "waitingMembers",
        (SELECT COALESCE(sum(count_running), 0)::integer FROM ${n.sets} WHERE status IN ('WAITING', 'RUNNING')) AS "runningMembers",
        (SELECT count(*)::integer FROM ${n.deliveries} WHERE state = 'pending') AS "pendingDeliveries",
        (SELECT count(*)::integer FROM ${n.workers} WHERE heartbeat_at >= now() - make_interval(secs => $1::double precision / 1000)) AS "liveWorkers",
        (SELECT COALESCE(json_object_agg(q.env, q.n::integer), '{}') FROM (${queuedByEnvSql(n.sets, 'queue_seq')}) q) AS "queuedSets"`,
    values: [staleMs],
  });
  return rows[0] as QueueStats;
}
