/**
 * The SQLite side of the sets sub-store: a set and its members created in one
 * transaction (once per Idempotency-Key), read (through the owning process's
 * copy of set rows: ./set-cache.ts), and cancelled (./cancel.ts). What people
 * read about a set is ./set-views.ts's.
 */
import type { EventEmitter } from 'node:events';
import type Database from 'better-sqlite3';
import type { NewTestRunSet, SetControl, TestRunRecord, TestRunSetRecord } from '../../core/types.js';
import { batchKeyOf } from '../../core/batch.js';
import { deadlineOf } from '../../core/deadlines.js';
import type { CancelRequest, CancelResult, CreatedOnce, IdempotencyClaim, SetsStore } from '../sets.js';
import { rowMappers } from '../rows.js';
import { olderInGroupSql } from '../queue.js';
import { SqliteCancels } from './cancel.js';
import { SET_CANCELLED } from './claims.js';
import type { SetRowCache } from './set-cache.js';
import { SET_CHANGED, type MoveCounts } from './set-moves.js';
import { settle } from './settle.js';
import { SET_COLUMNS, type RunRow, type SetRow } from './statements.js';

/** SQLite returns timestamps as the ISO strings they were written as. */
const { toSet, toRun } = rowMappers<string>((value) => value);

type Statement = 'insertSet' | 'insertRun' | 'getSet' | 'listRuns' | 'idemDeleteExpired' | 'idemFind' | 'idemInsert' | 'overdue' | 'olderInGroup';

export class SqliteSets implements SetsStore {
  private readonly sql: Record<Statement, Database.Statement>;
  private readonly cancels: SqliteCancels;

  constructor(
    private readonly db: Database.Database,
    /** Only in the owning process, the one writer of sets (see SetRowCache). */
    private readonly setRows: SetRowCache | undefined,
    private readonly wake: EventEmitter,
    moveSet: MoveCounts,
  ) {
    this.sql = {
      insertSet: db.prepare(`
        INSERT INTO test_run_sets (id, env, status, created_at, count_waiting, variables, overrides, key_id, max_failures, labels, suite, selection, max_concurrent,
          timeout_seconds, deadline_at, concurrency_group)
        VALUES (@id, @env, 'WAITING', @created_at, @count_waiting, @variables, @overrides, @key_id, @max_failures, @labels, @suite, @selection, @max_concurrent,
          @timeout_seconds, @deadline_at, @concurrency_group)`),
      insertRun: db.prepare(`
        INSERT INTO test_runs (id, set_id, env, position, name, type, spec, status, batch_key, expected_ms, quarantined, fail_on_flaky)
        VALUES (@id, @set_id, @env, @position, @name, @type, @spec, 'WAITING', @batch_key, @expected_ms, @quarantined, @fail_on_flaky)`),
      getSet: db.prepare(`SELECT ${SET_COLUMNS} FROM test_run_sets WHERE id = ?`),
      listRuns: db.prepare(`
        SELECT id, set_id, position, name, type, status, attempts, started_at, ended_at, duration_ms, error, output, ran_on, worker_id, expected_ms, skipped, quarantined, result_cases, starts, lost_starts
        FROM test_runs WHERE set_id = ? ORDER BY position`),
      // Idempotency-Key on create: keys are scoped to the API key that sent them.
      idemDeleteExpired: db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?'),
      idemFind: db.prepare('SELECT set_id, body_hash FROM idempotency_keys WHERE key_id = ? AND key = ? AND expires_at > ?'),
      idemInsert: db.prepare(`
        INSERT INTO idempotency_keys (key_id, key, body_hash, set_id, expires_at)
        VALUES (@key_id, @key, @body_hash, @set_id, @expires_at)`),
      olderInGroup: db.prepare(olderInGroupSql('test_run_sets', 'rowid', '@id')),
      overdue: db.prepare(`
        SELECT id, timeout_seconds AS timeoutSeconds FROM test_run_sets
        WHERE status IN ('WAITING', 'RUNNING') AND deadline_at IS NOT NULL AND deadline_at <= ?
        ORDER BY deadline_at LIMIT ?`),
    };
    this.cancels = new SqliteCancels(db, moveSet);
  }

  create(set: NewTestRunSet): Promise<void> {
    return settle(() => this.db.transaction(() => this.insertSetRows(set)).immediate());
  }

  createOnce(set: NewTestRunSet, idem: IdempotencyClaim): Promise<CreatedOnce> {
    const once = this.db.transaction((): CreatedOnce => {
      const now = Date.now();
      this.sql.idemDeleteExpired.run(now);
      const earlier = this.sql.idemFind.get(idem.keyId, idem.key, now) as { set_id: string; body_hash: string } | undefined;
      if (earlier) return { setId: earlier.set_id, bodyHash: earlier.body_hash, created: false };
      this.insertSetRows(set);
      this.sql.idemInsert.run({ key_id: idem.keyId, key: idem.key, body_hash: idem.bodyHash, set_id: set.id, expires_at: now + idem.ttlMs });
      return { setId: set.id, bodyHash: idem.bodyHash, created: true };
    });
    return settle(() => once.immediate());
  }

  findCreatedOnce(keyId: string, key: string): Promise<{ setId: string; bodyHash: string } | undefined> {
    return settle(() => {
      const row = this.sql.idemFind.get(keyId, key, Date.now()) as { set_id: string; body_hash: string } | undefined;
      return row && { setId: row.set_id, bodyHash: row.body_hash };
    });
  }

  get(id: string): Promise<TestRunSetRecord | undefined> {
    return settle(() => this.readSet(id));
  }

  peek(id: string): TestRunSetRecord | undefined {
    return this.setRows?.get(id);
  }

  getMany(ids: readonly string[]): Promise<TestRunSetRecord[]> {
    return settle(() => [...new Set(ids)].flatMap((id) => this.readSet(id) ?? []));
  }

  onChanged(listener: (setId: string) => void): () => void {
    this.wake.on(SET_CHANGED, listener);
    return () => this.wake.off(SET_CHANGED, listener);
  }

  listRuns(setId: string): Promise<TestRunRecord[]> {
    return settle(() => (this.sql.listRuns.all(setId) as RunRow[]).map(toRun));
  }

  cancel(setId: string, req: CancelRequest): Promise<CancelResult> {
    return settle(() => {
      const result = this.db.transaction(() => this.cancels.cancel(setId, req)).immediate();
      if (result.found && result.cancelled) this.wake.emit(SET_CANCELLED, setId);
      return result;
    });
  }

  control(setId: string): Promise<SetControl | null> {
    return settle(() => this.cancels.control(setId));
  }

  olderInGroup(setId: string): Promise<string[]> {
    return settle(() => (this.sql.olderInGroup.all({ id: setId }) as { id: string }[]).map((r) => r.id));
  }

  overdue(limit: number): Promise<Array<{ id: string; timeoutSeconds: number }>> {
    return settle(() => this.sql.overdue.all(new Date().toISOString(), limit) as Array<{ id: string; timeoutSeconds: number }>);
  }

  private insertSetRows(set: NewTestRunSet): void {
    this.sql.insertSet.run({
      id: set.id,
      env: set.env,
      created_at: set.createdAt,
      count_waiting: set.runs.length,
      variables: JSON.stringify(set.variables),
      overrides: JSON.stringify(set.overrides),
      key_id: set.keyId,
      max_failures: set.maxFailures,
      labels: JSON.stringify(set.labels),
      suite: set.suiteVersion ?? null,
      selection: set.select ? JSON.stringify(set.select) : null,
      max_concurrent: set.maxConcurrentSets ?? null,
      timeout_seconds: set.timeoutSeconds ?? null,
      deadline_at: set.timeoutSeconds ? deadlineOf(set.createdAt, set.timeoutSeconds) : null,
      concurrency_group: set.concurrencyGroup ?? null,
    });
    for (const run of set.runs) {
      this.sql.insertRun.run({
        id: run.id,
        set_id: set.id,
        env: set.env,
        position: run.position,
        name: run.spec.name,
        type: run.spec.type,
        spec: JSON.stringify(run.spec),
        batch_key: batchKeyOf(run.spec),
        expected_ms: Math.round(run.expectedMs),
        quarantined: run.quarantined ? 1 : 0,
        fail_on_flaky: run.failOnFlaky ? 1 : 0,
      });
    }
  }

  private readSet(id: string): TestRunSetRecord | undefined {
    const cached = this.setRows?.get(id);
    if (cached) return cached;
    const row = this.sql.getSet.get(id) as SetRow | undefined;
    if (!row) return undefined;
    return this.setRows ? this.setRows.set(toSet(row)) : toSet(row);
  }
}
