/**
 * Set retention on SQLite (see ../retention.ts). One process owns the file, so
 * a batch is simply one immediate transaction; the ids travel as one JSON
 * array (json_each) so each table is one statement whatever the batch size.
 */
import type Database from 'better-sqlite3';
import type { DueSets, RemovedBatch, RemovedSummary, RetentionWhenUnset, SetRetention } from '../retention.js';
import { settle } from './settle.js';

/** The batch's set ids, as a table: `IN (${IDS})`. */
const IDS = 'SELECT value FROM json_each(@ids)';

type Statement = 'doomed' | 'artifacts' | 'attempts' | 'deliveries' | 'events' | 'idempotency' | 'runs' | 'sets' | 'count' | 'countArtifacts' | 'due' | 'whenUnset';

export class SqliteRetention implements SetRetention {
  private readonly sql: Record<Statement, Database.Statement>;

  constructor(
    private readonly db: Database.Database,
    /** Drops a removed set from the serving process's copy of set rows (SetRowCache). */
    private readonly forget: (setId: string) => void,
  ) {
    // test_run_sets_ended (migration 12) serves the selection, oldest end first.
    const ended = 'FROM test_run_sets WHERE ended_at < @before';
    this.sql = {
      doomed: db.prepare(`SELECT id, ended_at ${ended} AND ended_at >= @from ORDER BY ended_at LIMIT @limit`),
      artifacts: db.prepare(`DELETE FROM artifacts WHERE set_id IN (${IDS}) RETURNING location, size`),
      attempts: db.prepare(`DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM webhook_deliveries WHERE set_id IN (${IDS}))`),
      deliveries: db.prepare(`DELETE FROM webhook_deliveries WHERE set_id IN (${IDS})`),
      events: db.prepare(`DELETE FROM set_events WHERE set_id IN (${IDS})`),
      idempotency: db.prepare(`DELETE FROM idempotency_keys WHERE set_id IN (${IDS})`),
      runs: db.prepare(`DELETE FROM test_runs WHERE set_id IN (${IDS})`),
      sets: db.prepare(`DELETE FROM test_run_sets WHERE id IN (${IDS})`),
      // A set's counts always sum to its members: no scan of test_runs.
      count: db.prepare(`SELECT count(*) AS sets, coalesce(sum(count_waiting + count_running + count_success + count_fail), 0) AS members ${ended}`),
      countArtifacts: db.prepare(`
        SELECT count(*) AS artifacts, coalesce(sum(a.size), 0) AS bytes
        FROM test_run_sets AS s JOIN artifacts AS a ON a.set_id = s.id WHERE s.ended_at < @before`),
      // The index alone: it runs on the API's thread, before a sweep's first removal.
      due: db.prepare(`SELECT count(*) AS sets, min(ended_at) AS oldest ${ended}`),
      whenUnset: db.prepare("SELECT value FROM store_settings WHERE name = 'retention_when_unset'").pluck(),
    };
  }

  removeEndedBefore(before: string, limit: number, from?: string | null): Promise<RemovedBatch> {
    const remove = this.db.transaction((): RemovedBatch => {
      // ISO times compare as text; '' is before every one of them.
      const doomed = this.sql.doomed.all({ before, limit, from: from ?? '' }) as Array<{ id: string; ended_at: string }>;
      if (doomed.length === 0) return { sets: 0, members: 0, artifacts: 0, artifactBytes: 0, artifactLocations: [], lastEndedAt: null };
      const setIds = doomed.map((d) => d.id);
      const ids = JSON.stringify(setIds);
      // Children before parents: artifacts name members, attempts name deliveries.
      const artifacts = this.sql.artifacts.all({ ids }) as Array<{ location: string; size: number }>;
      this.sql.attempts.run({ ids });
      this.sql.deliveries.run({ ids });
      this.sql.events.run({ ids });
      this.sql.idempotency.run({ ids });
      const members = this.sql.runs.run({ ids }).changes;
      const sets = this.sql.sets.run({ ids }).changes;
      for (const id of setIds) this.forget(id);
      return {
        sets,
        members,
        artifacts: artifacts.length,
        artifactBytes: artifacts.reduce((sum, a) => sum + a.size, 0),
        artifactLocations: artifacts.map((a) => a.location),
        lastEndedAt: doomed.at(-1)!.ended_at,
      };
    });
    return settle(() => remove.immediate());
  }

  countEndedBefore(before: string): Promise<RemovedSummary> {
    return settle(() => {
      const { sets, members } = this.sql.count.get({ before }) as { sets: number; members: number };
      const { artifacts, bytes } = this.sql.countArtifacts.get({ before }) as { artifacts: number; bytes: number };
      return { sets, members, artifacts, artifactBytes: bytes };
    });
  }

  dueBefore(before: string): Promise<DueSets> {
    return settle(() => {
      const { sets, oldest } = this.sql.due.get({ before }) as { sets: number; oldest: string | null };
      return { sets, oldestEndedAt: oldest };
    });
  }

  whenUnset(): Promise<RetentionWhenUnset> {
    return settle(() => (this.sql.whenUnset.get() === 'keep' ? 'keep' : 'default'));
  }
}
