/**
 * The SQLite side of the durations sub-store: each test's latest successful
 * durations per environment, what expected durations, claim order and shares
 * are computed from.
 */
import type Database from 'better-sqlite3';
import type { DurationSample } from '../../core/types.js';
import { DURATION_SAMPLES, type DurationsStore } from '../durations.js';
import { settle } from './settle.js';
import { now } from './statements.js';

export class SqliteDurations implements DurationsStore {
  private readonly sql: Record<'get' | 'put' | 'history', Database.Statement>;

  constructor(private readonly db: Database.Database) {
    this.sql = {
      get: db.prepare('SELECT samples FROM test_durations WHERE env = ? AND name = ?'),
      put: db.prepare(`
        INSERT INTO test_durations (env, name, samples, updated_at) VALUES (@env, @name, @samples, @at)
        ON CONFLICT (env, name) DO UPDATE SET samples = excluded.samples, updated_at = excluded.updated_at`),
      history: db.prepare('SELECT name, samples FROM test_durations WHERE env = ?'),
    };
  }

  /** Appends each sample to its test's history, keeping the newest DURATION_SAMPLES. */
  record(samples: readonly DurationSample[]): Promise<void> {
    return settle(() => {
      const at = now();
      this.db.transaction(() => {
        for (const s of samples) {
          const row = this.sql.get.get(s.env, s.name) as { samples: string } | undefined;
          const kept = [...(row ? (JSON.parse(row.samples) as number[]) : []), Math.round(s.ms)].slice(-DURATION_SAMPLES);
          this.sql.put.run({ env: s.env, name: s.name, samples: JSON.stringify(kept), at });
        }
      }).immediate();
    });
  }

  history(env: string): Promise<Map<string, number[]>> {
    return settle(() => {
      const rows = this.sql.history.all(env) as { name: string; samples: string }[];
      return new Map(rows.map((r) => [r.name, JSON.parse(r.samples) as number[]]));
    });
  }
}
