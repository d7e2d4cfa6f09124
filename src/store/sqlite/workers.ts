/**
 * The SQLite side of the workers sub-store: the registry (the one `serve`
 * process registers its pool here too, so shares are sized the same way on
 * both stores) and the queue figures a metrics scrape reads, each served by an
 * index (see migrations.ts).
 */
import type Database from 'better-sqlite3';
import type { BatchWorker, NewWorker, QueueStats, WorkerInfo, WorkersStore } from '../workers.js';
import { assembleWorkers, type LeasedRunRow, type WorkerRow } from '../rows.js';
import { settle } from './settle.js';
import { queuedByEnvSql } from '../queue.js';

type Statement = 'register' | 'heartbeat' | 'remove' | 'dropStale' | 'batch' | 'list' | 'leased' | 'waitingMembers' | 'runningMembers' | 'pendingDeliveries' | 'liveWorkers' | 'queuedSets';

export class SqliteWorkers implements WorkersStore {
  private readonly sql: Record<Statement, Database.Statement>;

  constructor(db: Database.Database) {
    this.sql = {
      register: db.prepare(`
        INSERT INTO workers (id, host, pid, slots, started_at, heartbeat_at, key_id) VALUES (@id, @host, @pid, @slots, @now, @now, @keyId)
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, slots = excluded.slots WHERE workers.key_id IS excluded.key_id`),
      heartbeat: db.prepare('UPDATE workers SET heartbeat_at = ? WHERE id = ? AND key_id IS ?'),
      remove: db.prepare('DELETE FROM workers WHERE id = ? AND key_id IS ?'),
      dropStale: db.prepare('DELETE FROM workers WHERE heartbeat_at < ?'),
      // Held members have a lease: the partial index test_runs_leased serves the count.
      batch: db.prepare(`
        SELECT w.id, w.host, w.slots, COALESCE(h.n, 0) AS holding, COALESCE(h.ms, 0) AS heldMs FROM workers w
        LEFT JOIN (
          SELECT worker_id, count(*) AS n, sum(COALESCE(expected_ms, 0)) AS ms FROM test_runs
          WHERE lease_expires_at IS NOT NULL AND set_id = ? AND batch_key = ? GROUP BY worker_id
        ) h ON h.worker_id = w.id
        ORDER BY w.host, w.id`),
      list: db.prepare('SELECT id, host, pid, slots, started_at, heartbeat_at FROM workers WHERE heartbeat_at >= ? ORDER BY host, started_at, id'),
      // Served by the partial index test_runs_leased: only held members have a lease.
      leased: db.prepare('SELECT id, set_id, name, type, status, started_at, worker_id FROM test_runs WHERE lease_expires_at IS NOT NULL'),
      // Unfinished sets through test_run_sets_status_recent, their counts rather than a COUNT over members.
      waitingMembers: db.prepare("SELECT COALESCE(sum(count_waiting), 0) AS n FROM test_run_sets WHERE status IN ('WAITING', 'RUNNING')").pluck(),
      runningMembers: db.prepare("SELECT COALESCE(sum(count_running), 0) AS n FROM test_run_sets WHERE status IN ('WAITING', 'RUNNING')").pluck(),
      pendingDeliveries: db.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'pending'").pluck(),
      liveWorkers: db.prepare('SELECT count(*) AS n FROM workers WHERE heartbeat_at >= ?').pluck(),
      queuedSets: db.prepare(queuedByEnvSql('test_run_sets', 'rowid')),
    };
  }

  register(worker: NewWorker): Promise<boolean> {
    return settle(() => this.sql.register.run({ id: worker.id, host: worker.host, pid: worker.pid, slots: worker.slots, keyId: worker.keyId ?? null, now: Date.now() }).changes === 1);
  }

  heartbeat(id: string, keyId: string | null = null): Promise<boolean> {
    return settle(() => this.sql.heartbeat.run(Date.now(), id, keyId).changes === 1);
  }

  remove(id: string, keyId: string | null = null): Promise<void> {
    return settle(() => void this.sql.remove.run(id, keyId));
  }

  batchWorkers(setId: string, batchKey: string, staleMs: number): Promise<BatchWorker[]> {
    return settle(() => {
      this.sql.dropStale.run(Date.now() - staleMs);
      return this.sql.batch.all(setId, batchKey) as BatchWorker[];
    });
  }

  list(staleMs: number): Promise<WorkerInfo[]> {
    return settle(() => {
      const iso = (ms: number) => new Date(ms).toISOString();
      const rows = this.sql.list.all(Date.now() - staleMs) as Array<Omit<WorkerRow, 'started_at' | 'heartbeat_at'> & { started_at: number; heartbeat_at: number }>;
      const workers = rows.map((w) => ({ ...w, started_at: iso(w.started_at), heartbeat_at: iso(w.heartbeat_at) }));
      return assembleWorkers(workers, this.sql.leased.all() as LeasedRunRow[]);
    });
  }

  queueStats(staleMs: number): Promise<QueueStats> {
    return settle(() => ({
      waitingMembers: this.sql.waitingMembers.get() as number,
      runningMembers: this.sql.runningMembers.get() as number,
      pendingDeliveries: this.sql.pendingDeliveries.get() as number,
      liveWorkers: this.sql.liveWorkers.get(Date.now() - staleMs) as number,
      queuedSets: Object.fromEntries((this.sql.queuedSets.all() as Array<{ env: string; n: number }>).map((r) => [r.env, r.n])),
    }));
  }
}
