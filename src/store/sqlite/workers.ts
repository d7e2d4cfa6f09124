/**
 * The SQLite side of the workers registry: the one `serve` process registers
 * its pool here too, so shares are sized the same way on both stores.
 */
import type Database from 'better-sqlite3';
import type { NewWorker } from '../store.js';

export class SqliteWorkers {
  private readonly sql: Record<'register' | 'heartbeat' | 'remove' | 'dropStale' | 'slots', Database.Statement>;

  constructor(db: Database.Database) {
    this.sql = {
      register: db.prepare(`
        INSERT INTO workers (id, host, pid, slots, started_at, heartbeat_at) VALUES (@id, @host, @pid, @slots, @now, @now)
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, slots = excluded.slots`),
      heartbeat: db.prepare('UPDATE workers SET heartbeat_at = ? WHERE id = ?'),
      remove: db.prepare('DELETE FROM workers WHERE id = ?'),
      dropStale: db.prepare('DELETE FROM workers WHERE heartbeat_at < ?'),
      slots: db.prepare('SELECT COALESCE(sum(slots), 0) AS slots FROM workers'),
    };
  }

  register(worker: NewWorker): void {
    this.sql.register.run({ ...worker, now: Date.now() });
  }

  heartbeat(id: string): boolean {
    return this.sql.heartbeat.run(Date.now(), id).changes === 1;
  }

  remove(id: string): void {
    this.sql.remove.run(id);
  }

  liveSlots(staleMs: number): number {
    this.sql.dropStale.run(Date.now() - staleMs);
    return (this.sql.slots.get() as { slots: number }).slots;
  }
}
