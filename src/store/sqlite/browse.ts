/**
 * The SQLite store's dashboard operations: listing sets a page at a time, a
 * set's overrides, and browser sessions. Each listing shape (filters × cursor)
 * is its own prepared statement, so SQLite picks the matching index instead of
 * planning around `? IS NULL OR …`.
 */
import type Database from 'better-sqlite3';
import type { ApiKeyRecord, TestRunSetRecord, VariableValue } from '../../core/types.js';
import { decodeCursor, encodeCursor, type ListSetsQuery, type NewSession, type SessionRecord, type SetPage } from '../browse.js';
import type { SetRow } from './statements.js';
import { settle } from './settle.js';

const SET_COLUMNS = 'id, env, status, created_at, started_at, ended_at, count_waiting, count_running, count_success, count_fail';

interface SessionRow {
  csrf_token: string;
  expires_at: number;
  key_id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export class SqliteBrowse {
  private readonly listings = new Map<string, Database.Statement>();
  private readonly overrides: Database.Statement;
  private readonly labels: Database.Statement;
  private readonly insertSession: Database.Statement;
  private readonly deleteExpired: Database.Statement;
  private readonly findSessionRow: Database.Statement;
  private readonly deleteSessionRow: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly toSet: (row: SetRow) => TestRunSetRecord,
  ) {
    this.overrides = db.prepare('SELECT overrides FROM test_run_sets WHERE id = ?');
    this.labels = db.prepare('SELECT labels FROM test_run_sets WHERE id = ?');
    this.insertSession = db.prepare(`
      INSERT INTO sessions (id_hash, key_id, csrf_token, created_at, expires_at)
      VALUES (@id_hash, @key_id, @csrf_token, @created_at, @expires_at)`);
    this.deleteExpired = db.prepare('DELETE FROM sessions WHERE expires_at <= ?');
    // A revoked key ends its sessions: the join drops them at once, on every process.
    this.findSessionRow = db.prepare(`
      SELECT s.csrf_token, s.expires_at, k.id AS key_id, k.name, k.created_at, k.last_used_at, k.revoked_at
      FROM sessions s JOIN api_keys k ON k.id = s.key_id
      WHERE s.id_hash = ? AND s.expires_at > ? AND k.revoked_at IS NULL`);
    this.deleteSessionRow = db.prepare('DELETE FROM sessions WHERE id_hash = ?');
  }

  listSets(query: ListSetsQuery): Promise<SetPage> {
    return settle(() => this.listPage(query));
  }

  getSetOverrides(id: string): Promise<Record<string, VariableValue> | undefined> {
    return settle(() => {
      const row = this.overrides.get(id) as { overrides: string } | undefined;
      return row ? (JSON.parse(row.overrides) as Record<string, VariableValue>) : undefined;
    });
  }

  getSetLabels(id: string): Promise<Record<string, string> | undefined> {
    return settle(() => {
      const row = this.labels.get(id) as { labels: string } | undefined;
      return row ? (JSON.parse(row.labels) as Record<string, string>) : undefined;
    });
  }

  createSession(session: NewSession): Promise<SessionRecord> {
    return settle(() => this.insert(session));
  }

  findSession(idHash: string): Promise<SessionRecord | undefined> {
    return settle(() => this.find(idHash));
  }

  deleteSession(idHash: string): Promise<void> {
    return settle(() => void this.deleteSessionRow.run(idHash));
  }

  /** One page, fetching one extra row to know whether another page follows. */
  private listPage(query: ListSetsQuery): SetPage {
    const where: string[] = [];
    const params: Record<string, string | number> = { limit: query.limit + 1 };
    if (query.env !== undefined) {
      where.push('env = @env');
      params.env = query.env;
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

  private insert(session: NewSession): SessionRecord {
    const now = Date.now();
    const expiresAt = now + session.ttlMs;
    this.db.transaction(() => {
      this.deleteExpired.run(now);
      this.insertSession.run({
        id_hash: session.idHash,
        key_id: session.keyId,
        csrf_token: session.csrfToken,
        created_at: new Date(now).toISOString(),
        expires_at: expiresAt,
      });
    }).immediate();
    // Read as of its creation: a session with a TTL of a millisecond or so may have expired already.
    const found = this.find(session.idHash, now);
    if (!found) throw new Error('the session vanished right after it was stored (was its key revoked?)');
    return found;
  }

  /** A live session (as of `at`, ms) whose key is not revoked. */
  private find(idHash: string, at = Date.now()): SessionRecord | undefined {
    const row = this.findSessionRow.get(idHash, at) as SessionRow | undefined;
    if (!row) return undefined;
    const key: ApiKeyRecord = {
      id: row.key_id,
      name: row.name,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
      revokedAt: row.revoked_at,
    };
    return { key, csrfToken: row.csrf_token, expiresAt: new Date(row.expires_at).toISOString() };
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
