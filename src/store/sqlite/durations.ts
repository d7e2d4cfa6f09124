/**
 * The SQLite side of test duration history and a batch's waiting work: what
 * the scheduler's claim order and shares are computed from
 * (src/scheduler/shares.ts). Each method runs in its own transaction or inside
 * the caller's.
 */
import type Database from 'better-sqlite3';
import type { DurationSample } from '../../core/types.js';
import { DURATION_SAMPLES } from '../store.js';
import { now } from './statements.js';

export class SqliteDurations {
  private readonly sql: Record<'get' | 'put' | 'history' | 'waitingWork', Database.Statement>;

  constructor(private readonly db: Database.Database) {
    this.sql = {
      get: db.prepare('SELECT samples FROM test_durations WHERE env = ? AND name = ?'),
      put: db.prepare(`
        INSERT INTO test_durations (env, name, samples, updated_at) VALUES (@env, @name, @samples, @at)
        ON CONFLICT (env, name) DO UPDATE SET samples = excluded.samples, updated_at = excluded.updated_at`),
      history: db.prepare('SELECT name, samples FROM test_durations WHERE env = ?'),
      waitingWork: db.prepare(`
        SELECT expected_ms FROM test_runs
        WHERE set_id = ? AND batch_key = ? AND status = 'WAITING' AND worker_id IS NULL
        ORDER BY rowid LIMIT ?`),
    };
  }

  /** Appends each sample to its test's history, keeping the newest DURATION_SAMPLES. */
  record(samples: readonly DurationSample[]): void {
    const at = now();
    this.db.transaction(() => {
      for (const s of samples) {
        const row = this.sql.get.get(s.env, s.name) as { samples: string } | undefined;
        const kept = [...(row ? (JSON.parse(row.samples) as number[]) : []), Math.round(s.ms)].slice(-DURATION_SAMPLES);
        this.sql.put.run({ env: s.env, name: s.name, samples: JSON.stringify(kept), at });
      }
    }).immediate();
  }

  history(env: string): Map<string, number[]> {
    const rows = this.sql.history.all(env) as { name: string; samples: string }[];
    return new Map(rows.map((r) => [r.name, JSON.parse(r.samples) as number[]]));
  }

  waitingWork(setId: string, batchKey: string, limit: number): number[] {
    return (this.sql.waitingWork.all(setId, batchKey, limit) as { expected_ms: number | null }[]).map((r) => r.expected_ms ?? 0);
  }
}
