/**
 * The PostgreSQL side of the durations sub-store: each test's latest
 * successful durations per environment, what expected durations, claim order
 * and shares are computed from. The rules of ./statements.ts hold.
 */
import type pg from 'pg';
import type { DurationSample } from '../../core/types.js';
import { DURATION_SAMPLES, type DurationsStore } from '../durations.js';
import { withClient, type Queryable } from './connection.js';
import type { Names } from './statements.js';

export class PostgresDurations implements DurationsStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly n: Names,
  ) {}

  async record(samples: readonly DurationSample[]): Promise<void> {
    if (samples.length > 0) await withClient(this.pool, (q) => recordDurations(q, this.n, samples));
  }

  async history(env: string): Promise<Map<string, number[]>> {
    const rows = await withClient(this.pool, (q) => durationHistory(q, this.n, env));
    return new Map(rows.map((r) => [r.name, r.samples]));
  }
}

/**
 * Appends successful durations to each test's history, keeping the newest
 * DURATION_SAMPLES. Samples of one test arrive grouped (one row may be
 * updated once per statement), newest last.
 */
async function recordDurations(q: Queryable, n: Names, samples: readonly DurationSample[]): Promise<void> {
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
async function durationHistory(q: Queryable, n: Names, env: string): Promise<Array<{ name: string; samples: number[] }>> {
  const { rows } = await q.query<{ name: string; samples: number[] }>({
    name: 'runset.durationHistory',
    text: `SELECT name, samples FROM ${n.durations} WHERE env = $1`,
    values: [env],
  });
  return rows;
}
