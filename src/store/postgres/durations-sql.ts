/**
 * The PostgreSQL store's SQL for test duration history, the waiting work of
 * a batch and the live workers: what the scheduler's shares are computed from (src/scheduler/shares.ts).
 * The rules of ./sql.ts hold: schema-qualified, prepared by name.
 */
import type { DurationSample } from '../../core/types.js';
import { DURATION_SAMPLES, type BatchWorker, type WorkerInfo } from '../store.js';
import { assembleWorkers, type LeasedRunRow, type WorkerRow } from '../rows.js';
import type { Queryable } from './connection.js';
import type { Names } from './sql.js';

/**
 * Appends successful durations to each test's history, keeping the newest
 * DURATION_SAMPLES. Samples of one test arrive grouped (one row may be
 * updated once per statement), newest last.
 */
export async function recordDurations(q: Queryable, n: Names, samples: readonly DurationSample[]): Promise<void> {
  const grouped = new Map<string, { env: string; name: string; samples: number[] }>();
  for (const s of samples) {
    const key = JSON.stringify([s.env, s.name]);
    const entry = grouped.get(key) ?? { env: s.env, name: s.name, samples: [] };
    entry.samples.push(Math.round(s.ms));
    grouped.set(key, entry);
  }
  // Sorted by key: concurrent writers lock shared rows in one order and cannot deadlock.
  const rows = [...grouped.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
  await q.query({
    name: 'runset.recordDurations',
    text: `
      INSERT INTO ${n.durations} AS d (env, name, samples)
      SELECT x.env, x.name, x.samples FROM jsonb_to_recordset($1::jsonb) AS x(env text, name text, samples jsonb)
      ON CONFLICT (env, name) DO UPDATE SET updated_at = now(), samples = (
        SELECT jsonb_agg(e.v ORDER BY e.i) FROM (
          SELECT v, i FROM jsonb_array_elements(d.samples || EXCLUDED.samples) WITH ORDINALITY AS a(v, i)
          ORDER BY i DESC LIMIT $2
        ) AS e)`,
    values: [JSON.stringify(rows), DURATION_SAMPLES],
  });
}

/** Every test's recent successful durations in one environment (the primary key's prefix serves it). */
export async function durationHistory(q: Queryable, n: Names, env: string): Promise<Array<{ name: string; samples: number[] }>> {
  const { rows } = await q.query<{ name: string; samples: number[] }>({
    name: 'runset.durationHistory',
    text: `SELECT name, samples FROM ${n.durations} WHERE env = $1`,
    values: [env],
  });
  return rows;
}

/** Expected durations of a batch's members that nobody holds yet, in claim order (the test_runs_batch index). */
export async function waitingWork(q: Queryable, n: Names, setId: string, batchKey: string, limit: number): Promise<number[]> {
  const { rows } = await q.query<{ expected_ms: number | null }>({
    name: 'runset.waitingWork',
    text: `
      SELECT expected_ms FROM ${n.runs}
      WHERE set_id = $1 AND batch_key = $2 AND status = 'WAITING' AND worker_id IS NULL
      ORDER BY seq LIMIT $3`,
    values: [setId, batchKey, limit],
  });
  return rows.map((r) => r.expected_ms ?? 0);
}

// ── workers registry ──

export async function registerWorker(q: Queryable, n: Names, w: { id: string; host: string; pid: number; slots: number }): Promise<void> {
  await q.query({
    name: 'runset.registerWorker',
    text: `
      INSERT INTO ${n.workers} (id, host, pid, slots) VALUES ($1, $2, $3, $4)
      ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), slots = EXCLUDED.slots`,
    values: [w.id, w.host, w.pid, w.slots],
  });
}

export async function heartbeatWorker(q: Queryable, n: Names, id: string): Promise<boolean> {
  const res = await q.query({ name: 'runset.heartbeatWorker', text: `UPDATE ${n.workers} SET heartbeat_at = now() WHERE id = $1`, values: [id] });
  return res.rowCount === 1;
}

export async function removeWorker(q: Queryable, n: Names, id: string): Promise<void> {
  await q.query({ name: 'runset.removeWorker', text: `DELETE FROM ${n.workers} WHERE id = $1`, values: [id] });
}

/** Drops stale rows, then lists the rest with what each holds of one batch: one statement. */
export async function batchWorkers(q: Queryable, n: Names, setId: string, batchKey: string, staleMs: number): Promise<BatchWorker[]> {
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
export async function listWorkers(q: Queryable, n: Names, staleMs: number): Promise<WorkerInfo[]> {
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
