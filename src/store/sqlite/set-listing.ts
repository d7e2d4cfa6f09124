/**
 * The dashboard's list of sets on SQLite, a page at a time, newest first. Each
 * listing shape (filters × cursor) is its own prepared statement, so SQLite
 * picks the matching index instead of planning around `? IS NULL OR …`.
 */
import type Database from 'better-sqlite3';
import type { TestRunSetRecord } from '../../core/types.js';
import { decodeCursor, encodeCursor, type ListSetsQuery, type SetPage } from '../browse.js';
import { SET_COLUMNS, type SetRow } from './statements.js';

export class SetListing {
  private readonly listings = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly toSet: (row: SetRow) => TestRunSetRecord,
  ) {}

  /** One page, fetching one extra row to know whether another page follows. */
  page(query: ListSetsQuery): SetPage {
    const where: string[] = [];
    const params: Record<string, string | number> = { limit: query.limit + 1 };
    if (query.env !== undefined) {
      where.push('env = @env');
      params.env = query.env;
    }
    if (query.envs !== undefined) {
      where.push('env IN (SELECT value FROM json_each(@envs))');
      params.envs = JSON.stringify(query.envs);
    }
    if (query.status !== undefined) {
      where.push('status = @status');
      params.status = query.status;
    }
    // Keys are [a-z0-9_.-] (checked by the API), so a quoted JSON path names exactly the key.
    Object.entries(query.labels ?? {}).forEach(([key, value], i) => {
      where.push(`json_extract(labels, @label_path${i}) = @label_value${i}`);
      params[`label_path${i}`] = `$."${key}"`;
      params[`label_value${i}`] = value;
    });
    if (query.cursor !== undefined) {
      const at = decodeCursor(query.cursor);
      where.push('(created_at, id) < (@c_created_at, @c_id)');
      params.c_created_at = at.createdAt;
      params.c_id = at.id;
    }
    const rows = this.listing(where).all(params) as SetRow[];
    const more = rows.length > query.limit;
    const page = more ? rows.slice(0, query.limit) : rows;
    const last = page[page.length - 1];
    return { sets: page.map(this.toSet), nextCursor: more && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null };
  }

  private listing(where: string[]): Database.Statement {
    const shape = where.join(' AND ');
    let statement = this.listings.get(shape);
    if (!statement) {
      const filter = where.length > 0 ? `WHERE ${shape}` : '';
      statement = this.db.prepare(`SELECT ${SET_COLUMNS} FROM test_run_sets ${filter} ORDER BY created_at DESC, id DESC LIMIT @limit`);
      this.listings.set(shape, statement);
    }
    return statement;
  }
}
