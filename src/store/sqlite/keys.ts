/**
 * The SQLite side of the keys sub-store: API keys (only digests are stored:
 * src/auth/keys.ts) and the dashboard's browser sessions.
 */
import type Database from 'better-sqlite3';
import type { ApiKeyRecord } from '../../core/keys.js';
import type { NewSession, SessionRecord } from '../browse.js';
import type { KeysStore, NewApiKey } from '../keys.js';
import { rowMappers } from '../rows.js';
import { settle } from './settle.js';
import { KEY_COLUMNS, now, type KeyRow } from './statements.js';

const { toKey } = rowMappers<string>((value) => value);

const COLUMNS = '(id, name, hash, role, envs, expires_at, created_at)';
const VALUES = '@id, @name, @hash, @role, @envs, @expires_at, @created_at';

type SessionRow = KeyRow & { csrf_token: string; session_expires_at: number };

type Statement =
  | 'insert' | 'insertFirst' | 'list' | 'revoke' | 'findActive' | 'touch'
  | 'insertSession' | 'deleteExpiredSessions' | 'findSession' | 'deleteSession';

export class SqliteKeys implements KeysStore {
  private readonly sql: Record<Statement, Database.Statement>;

  constructor(private readonly db: Database.Database) {
    this.sql = {
      insert: db.prepare(`INSERT INTO api_keys ${COLUMNS} VALUES (${VALUES})`),
      // One statement, so one write transaction: SQLite lets one writer in at a time,
      // and the check and the insert see the same table.
      insertFirst: db.prepare(`INSERT INTO api_keys ${COLUMNS} SELECT ${VALUES} WHERE NOT EXISTS (SELECT 1 FROM api_keys)`),
      list: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys ORDER BY created_at, id`),
      revoke: db.prepare('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, @at) WHERE id = @id'),
      findActive: db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE hash = ? AND revoked_at IS NULL`),
      touch: db.prepare('UPDATE api_keys SET last_used_at = @at WHERE id = @id'),
      insertSession: db.prepare(`
        INSERT INTO sessions (id_hash, key_id, csrf_token, created_at, expires_at)
        VALUES (@id_hash, @key_id, @csrf_token, @created_at, @expires_at)`),
      deleteExpiredSessions: db.prepare('DELETE FROM sessions WHERE expires_at <= ?'),
      // A revoked key ends its sessions: the join drops them at once, on every process.
      findSession: db.prepare(`
        SELECT s.csrf_token, s.expires_at AS session_expires_at,
          k.id, k.name, k.role, k.envs, k.expires_at, k.created_at, k.last_used_at, k.revoked_at
        FROM sessions s JOIN api_keys k ON k.id = s.key_id
        WHERE s.id_hash = ? AND s.expires_at > ? AND k.revoked_at IS NULL`),
      deleteSession: db.prepare('DELETE FROM sessions WHERE id_hash = ?'),
    };
  }

  create(key: NewApiKey): Promise<ApiKeyRecord> {
    return settle(() => this.insert(this.sql.insert, key) as ApiKeyRecord);
  }

  /** The key, made only when the table holds none (revoked and expired keys count); undefined otherwise. */
  createFirst(key: NewApiKey): Promise<ApiKeyRecord | undefined> {
    return settle(() => this.insert(this.sql.insertFirst, key));
  }

  list(): Promise<ApiKeyRecord[]> {
    return settle(() => (this.sql.list.all() as KeyRow[]).map(toKey));
  }

  /** Keeps the first revocation time, and matches (so counts) an already revoked key. */
  revoke(id: string): Promise<boolean> {
    return settle(() => this.sql.revoke.run({ id, at: now() }).changes === 1);
  }

  findActiveByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    return settle(() => {
      const row = this.sql.findActive.get(hash) as KeyRow | undefined;
      return row ? toKey(row) : undefined;
    });
  }

  touch(ids: string[]): Promise<void> {
    return settle(() => {
      const at = now();
      this.db.transaction(() => ids.forEach((id) => this.sql.touch.run({ id, at })))();
    });
  }

  createSession(session: NewSession): Promise<SessionRecord> {
    return settle(() => {
      const at = Date.now();
      this.db.transaction(() => {
        this.sql.deleteExpiredSessions.run(at);
        this.sql.insertSession.run({
          id_hash: session.idHash,
          key_id: session.keyId,
          csrf_token: session.csrfToken,
          created_at: new Date(at).toISOString(),
          expires_at: at + session.ttlMs,
        });
      }).immediate();
      // Read as of its creation: a session with a TTL of a millisecond or so may have expired already.
      const found = this.session(session.idHash, at);
      if (!found) throw new Error('the session vanished right after it was stored (was its key revoked?)');
      return found;
    });
  }

  findSession(idHash: string): Promise<SessionRecord | undefined> {
    return settle(() => this.session(idHash, Date.now()));
  }

  deleteSession(idHash: string): Promise<void> {
    return settle(() => void this.sql.deleteSession.run(idHash));
  }

  /** A live session (as of `at`, ms) whose key is not revoked. */
  private session(idHash: string, at: number): SessionRecord | undefined {
    const row = this.sql.findSession.get(idHash, at) as SessionRow | undefined;
    if (!row) return undefined;
    return { key: toKey(row), csrfToken: row.csrf_token, expiresAt: new Date(row.session_expires_at).toISOString() };
  }

  /** Runs an insert of `key`; undefined when it inserted no row. */
  private insert(statement: Database.Statement, key: NewApiKey): ApiKeyRecord | undefined {
    const createdAt = now();
    const scope = { role: key.role ?? 'admin', envs: key.envs ? [...key.envs] : null, expiresAt: key.expiresAt ?? null };
    const { changes } = statement.run({
      id: key.id,
      name: key.name,
      hash: key.hash,
      role: scope.role,
      envs: scope.envs && JSON.stringify(scope.envs),
      expires_at: scope.expiresAt,
      created_at: createdAt,
    });
    return changes === 0 ? undefined : { id: key.id, name: key.name, ...scope, createdAt, lastUsedAt: null, revokedAt: null };
  }
}
