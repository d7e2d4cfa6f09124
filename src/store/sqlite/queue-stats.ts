/** The SQLite side of Store.queueStats: three reads, each served by an index (see migrations.ts). */
import type Database from 'better-sqlite3';
import type { QueueStats } from '../store.js';

export function prepareQueueStats(db: Database.Database): (staleMs: number) => QueueStats {
  // Unfinished sets through test_run_sets_status_recent, their counts rather than a COUNT over members.
  const waiting = db.prepare("SELECT COALESCE(sum(count_waiting), 0) AS n FROM test_run_sets WHERE status IN ('WAITING', 'RUNNING')").pluck();
  const pending = db.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'pending'").pluck();
  const live = db.prepare('SELECT count(*) AS n FROM workers WHERE heartbeat_at >= ?').pluck();
  return (staleMs) => ({
    waitingMembers: waiting.get() as number,
    pendingDeliveries: pending.get() as number,
    liveWorkers: live.get(Date.now() - staleMs) as number,
  });
}
