/**
 * Set retention on PostgreSQL (see ../retention.ts). Several API processes may
 * sweep at once: each batch takes its sets with `FOR UPDATE SKIP LOCKED`, so
 * two sweepers get disjoint batches and neither waits for the other (a set
 * another sweeper holds is skipped now and gone when it commits). The sets are
 * ended, so no member move competes for their rows; what else may hold a row
 * the batch deletes (a webhook delivery being recorded, a set event being
 * fanned out) is waited for, one statement at a time, before its row goes.
 */
import type pg from 'pg';
import type { DueSets, RemovedBatch, RemovedSummary, RetentionWhenUnset, SetRetention } from '../retention.js';
import { withClient, withTransaction, type Queryable } from './connection.js';
import type { Names } from './statements.js';

export class PostgresRetention implements SetRetention {
  constructor(
    private readonly pool: pg.Pool,
    private readonly n: Names,
  ) {}

  removeEndedBefore(before: string, limit: number, from?: string | null): Promise<RemovedBatch> {
    return withTransaction(this.pool, async (tx) => {
      const n = this.n;
      // test_run_sets_ended (migration 12) serves this, oldest end first, from `from` on.
      const { rows } = await tx.query<{ id: string; ended_at: Date }>({
        name: 'runset.retention.takeEnded',
        text: `
          SELECT id, ended_at FROM ${n.sets} WHERE ended_at < $1::timestamptz AND ended_at >= coalesce($3::timestamptz, '-infinity')
          ORDER BY ended_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        values: [before, limit, from ?? null],
      });
      const ids = rows.map((r) => r.id);
      if (ids.length === 0) return { sets: 0, members: 0, artifacts: 0, artifactBytes: 0, artifactLocations: [], lastEndedAt: null };
      const del = (name: string, text: string) => tx.query({ name: `runset.retention.${name}`, text, values: [ids] });
      // Children before parents: artifacts name members, attempts name deliveries.
      const artifacts = await tx.query<{ location: string; size: string }>({
        name: 'runset.retention.artifacts',
        text: `DELETE FROM ${n.artifacts} WHERE set_id = ANY($1::text[]) RETURNING location, size`,
        values: [ids],
      });
      // Events first: an event being fanned out right now is waited for, and the
      // deliveries its fan-out committed are then seen by the next statements.
      await del('events', `DELETE FROM ${n.setEvents} WHERE set_id = ANY($1::text[])`);
      // Lock the deliveries before their attempts go: an attempt being recorded commits first.
      await del('lockDeliveries', `SELECT id FROM ${n.deliveries} WHERE set_id = ANY($1::text[]) ORDER BY id FOR UPDATE`);
      await del('attempts', `DELETE FROM ${n.attempts} WHERE delivery_id IN (SELECT id FROM ${n.deliveries} WHERE set_id = ANY($1::text[]))`);
      await del('deliveries', `DELETE FROM ${n.deliveries} WHERE set_id = ANY($1::text[])`);
      await del('idempotency', `DELETE FROM ${n.idempotency} WHERE set_id = ANY($1::text[])`);
      const members = await del('runs', `DELETE FROM ${n.runs} WHERE set_id = ANY($1::text[])`);
      const sets = await del('sets', `DELETE FROM ${n.sets} WHERE id = ANY($1::text[])`);
      return {
        sets: sets.rowCount ?? 0,
        members: members.rowCount ?? 0,
        artifacts: artifacts.rows.length,
        artifactBytes: artifacts.rows.reduce((sum, a) => sum + Number(a.size), 0),
        artifactLocations: artifacts.rows.map((a) => a.location),
        lastEndedAt: rows.at(-1)!.ended_at.toISOString(),
      };
    });
  }

  countEndedBefore(before: string): Promise<RemovedSummary> {
    return withClient(this.pool, (q) => countEnded(q, this.n, before));
  }

  async dueBefore(before: string): Promise<DueSets> {
    const { rows } = await this.pool.query<{ sets: string; oldest: Date | null }>({
      name: 'runset.retention.due',
      text: `SELECT count(*) AS sets, min(ended_at) AS oldest FROM ${this.n.sets} WHERE ended_at < $1::timestamptz`,
      values: [before],
    });
    return { sets: Number(rows[0]!.sets), oldestEndedAt: rows[0]!.oldest?.toISOString() ?? null };
  }

  async whenUnset(): Promise<RetentionWhenUnset> {
    const { rows } = await this.pool.query<{ value: string }>({
      name: 'runset.retention.whenUnset',
      text: `SELECT value FROM ${this.n.settings} WHERE name = 'retention_when_unset'`,
    });
    return rows[0]?.value === 'keep' ? 'keep' : 'default';
  }
}

async function countEnded(q: Queryable, n: Names, before: string): Promise<RemovedSummary> {
  // A set's counts always sum to its members: no scan of test_runs.
  const { rows } = await q.query<{ sets: string; members: string; artifacts: string; bytes: string }>({
    name: 'runset.retention.count',
    text: `
      SELECT count(*) AS sets, coalesce(sum(count_waiting + count_running + count_success + count_fail), 0) AS members,
        coalesce(sum(a.artifacts), 0) AS artifacts, coalesce(sum(a.bytes), 0) AS bytes
      FROM ${n.sets} AS s
      LEFT JOIN LATERAL (SELECT count(*) AS artifacts, sum(size) AS bytes FROM ${n.artifacts} WHERE set_id = s.id) AS a ON true
      WHERE s.ended_at < $1::timestamptz`,
    values: [before],
  });
  const row = rows[0]!;
  return { sets: Number(row.sets), members: Number(row.members), artifacts: Number(row.artifacts), artifactBytes: Number(row.bytes) };
}
