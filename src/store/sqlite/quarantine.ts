/** The SQLite side of quarantine (see ../quarantine.ts). Times are ISO text, compared as text. */
import type Database from 'better-sqlite3';
import type { NewQuarantineEntry, QuarantineEntry, QuarantineStore } from '../quarantine.js';
import { settle } from './settle.js';
import { now } from './statements.js';

interface QuarantineRow {
  env: string;
  name: string;
  reason: string;
  until: string;
  created_at: string;
  created_by_key_id: string | null;
  created_by_name: string | null;
}

const COLUMNS = 'env, name, reason, until, created_at, created_by_key_id, created_by_name';

function entryOf(row: QuarantineRow): QuarantineEntry {
  return { env: row.env, name: row.name, reason: row.reason, until: row.until, createdAt: row.created_at, createdByKeyId: row.created_by_key_id, createdByName: row.created_by_name };
}

export class SqliteQuarantine implements QuarantineStore {
  private readonly sql: Record<'inForce' | 'put' | 'all' | 'some' | 'names' | 'remove', Database.Statement>;

  constructor(private readonly db: Database.Database) {
    this.sql = {
      inForce: db.prepare('SELECT 1 FROM quarantine WHERE env = ? AND name = ? AND until > ?'),
      put: db.prepare(`
        INSERT INTO quarantine (${COLUMNS}) VALUES (@env, @name, @reason, @until, @at, @by, @by_name)
        ON CONFLICT (env, name) DO UPDATE SET reason = excluded.reason, until = excluded.until, created_at = excluded.created_at,
          created_by_key_id = excluded.created_by_key_id, created_by_name = excluded.created_by_name
        RETURNING ${COLUMNS}`),
      all: db.prepare(`SELECT ${COLUMNS} FROM quarantine WHERE until > ? ORDER BY env, name`),
      some: db.prepare(`SELECT ${COLUMNS} FROM quarantine WHERE until > ? AND env IN (SELECT value FROM json_each(?)) ORDER BY env, name`),
      names: db.prepare('SELECT name FROM quarantine WHERE env = ? AND until > ?'),
      remove: db.prepare('DELETE FROM quarantine WHERE env = ? AND name = ? RETURNING until > ? AS inForce'),
    };
  }

  put(entry: NewQuarantineEntry): Promise<{ created: boolean; entry: QuarantineEntry }> {
    return settle(() =>
      this.db.transaction(() => {
        const at = now();
        const created = this.sql.inForce.get(entry.env, entry.name, at) === undefined;
        const row = this.sql.put.get({ ...entry, at, by: entry.createdByKeyId, by_name: entry.createdByName }) as QuarantineRow;
        return { created, entry: entryOf(row) };
      }).immediate(),
    );
  }

  list(envs: readonly string[] | null): Promise<QuarantineEntry[]> {
    return settle(() => {
      const rows = envs === null ? this.sql.all.all(now()) : this.sql.some.all(now(), JSON.stringify(envs));
      return (rows as QuarantineRow[]).map(entryOf);
    });
  }

  activeNames(env: string): Promise<Set<string>> {
    return settle(() => new Set((this.sql.names.all(env, now()) as { name: string }[]).map((r) => r.name)));
  }

  remove(env: string, name: string): Promise<boolean> {
    return settle(() => (this.sql.remove.get(env, name, now()) as { inForce: number } | undefined)?.inForce === 1);
  }
}
