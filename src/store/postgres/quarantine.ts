/** The PostgreSQL side of quarantine (see ../quarantine.ts), on the database's clock. */
import type pg from 'pg';
import type { NewQuarantineEntry, QuarantineEntry, QuarantineStore } from '../quarantine.js';
import type { Names } from './statements.js';

interface QuarantineRow {
  env: string;
  name: string;
  reason: string;
  until: Date;
  created_at: Date;
  created_by_key_id: string | null;
  created_by_name: string | null;
}

const COLUMNS = 'env, name, reason, until, created_at, created_by_key_id, created_by_name';

function entryOf(row: QuarantineRow): QuarantineEntry {
  return {
    env: row.env,
    name: row.name,
    reason: row.reason,
    until: row.until.toISOString(),
    createdAt: row.created_at.toISOString(),
    createdByKeyId: row.created_by_key_id,
    createdByName: row.created_by_name,
  };
}

export class PostgresQuarantine implements QuarantineStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly n: Names,
  ) {}

  async put(entry: NewQuarantineEntry): Promise<{ created: boolean; entry: QuarantineEntry }> {
    // `was` reads the row as it stood before this statement: an entry in force is replaced, not created.
    const { rows } = await this.pool.query<QuarantineRow & { created: boolean }>({
      name: 'runset.putQuarantine',
      text: `
        WITH was AS (SELECT until > now() AS in_force FROM ${this.n.quarantine} WHERE env = $1 AND name = $2)
        INSERT INTO ${this.n.quarantine} AS q (${COLUMNS}) VALUES ($1, $2, $3, $4, now(), $5, $6)
        ON CONFLICT (env, name) DO UPDATE SET reason = excluded.reason, until = excluded.until, created_at = excluded.created_at,
          created_by_key_id = excluded.created_by_key_id, created_by_name = excluded.created_by_name
        RETURNING ${COLUMNS.split(', ').map((c) => `q.${c}`).join(', ')}, NOT coalesce((SELECT in_force FROM was), false) AS created`,
      values: [entry.env, entry.name, entry.reason, entry.until, entry.createdByKeyId, entry.createdByName],
    });
    const row = rows[0]!;
    return { created: row.created, entry: entryOf(row) };
  }

  async list(envs: readonly string[] | null): Promise<QuarantineEntry[]> {
    const { rows } = await this.pool.query<QuarantineRow>({
      name: 'runset.listQuarantine',
      text: `SELECT ${COLUMNS} FROM ${this.n.quarantine} WHERE until > now() AND ($1::text[] IS NULL OR env = ANY($1)) ORDER BY env, name`,
      values: [envs],
    });
    return rows.map(entryOf);
  }

  async activeNames(env: string): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ name: string }>({
      name: 'runset.quarantinedNames',
      text: `SELECT name FROM ${this.n.quarantine} WHERE env = $1 AND until > now()`,
      values: [env],
    });
    return new Set(rows.map((r) => r.name));
  }

  async remove(env: string, name: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ in_force: boolean }>({
      name: 'runset.removeQuarantine',
      text: `DELETE FROM ${this.n.quarantine} WHERE env = $1 AND name = $2 RETURNING until > now() AS in_force`,
      values: [env, name],
    });
    return rows[0]?.in_force === true;
  }
}
