/**
 * The SQLite side of API keys: their statements and the reads and writes on
 * them. Only digests are stored (src/auth/keys.ts).
 */
import type Database from 'better-sqlite3';
import type { ApiKeyRecord } from '../../core/types.js';
import type { NewApiKey } from '../store.js';
import { rowMappers } from '../rows.js';
import { KEY_COLUMNS, now, type KeyRow } from './statements.js';

const { toKey } = rowMappers<string>((value) => value);

const COLUMNS = '(id, name, hash, role, envs, expires_at, created_at)';
const VALUES = '@id, @name, @hash, @role, @envs, @expires_at, @created_at';

export class SqliteKeys {
  private readonly sql: Record<'insert' | 'insertFirst' | 'list' | 'revoke' | 'findActive' | 'touch', Database.Statement>;

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
    };
  }

  create(key: NewApiKey): ApiKeyRecord {
    return this.insert(this.sql.insert, key) as ApiKeyRecord;
  }

  /** The key, made only when the table holds none (revoked and expired keys count); undefined otherwise. */
  createFirst(key: NewApiKey): ApiKeyRecord | undefined {
    return this.insert(this.sql.insertFirst, key);
  }

  list(): ApiKeyRecord[] {
    return (this.sql.list.all() as KeyRow[]).map(toKey);
  }

  /** Keeps the first revocation time, and matches (so counts) an already revoked key. */
  revoke(id: string): boolean {
    return this.sql.revoke.run({ id, at: now() }).changes === 1;
  }

  findActive(hash: string): ApiKeyRecord | undefined {
    const row = this.sql.findActive.get(hash) as KeyRow | undefined;
    return row ? toKey(row) : undefined;
  }

  touch(ids: string[]): void {
    const at = now();
    this.db.transaction(() => ids.forEach((id) => this.sql.touch.run({ id, at })))();
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
