/** SQL for Idempotency-Key on create (SQLite). Keys are scoped to the API key that sent them. */
import type Database from 'better-sqlite3';

export interface IdempotencyStatements {
  deleteExpired: Database.Statement;
  find: Database.Statement;
  insert: Database.Statement;
}

export function prepareIdempotency(db: Database.Database): IdempotencyStatements {
  return {
    deleteExpired: db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?'),
    find: db.prepare('SELECT set_id, body_hash FROM idempotency_keys WHERE key_id = ? AND key = ? AND expires_at > ?'),
    insert: db.prepare(`
      INSERT INTO idempotency_keys (key_id, key, body_hash, set_id, expires_at)
      VALUES (@key_id, @key, @body_hash, @set_id, @expires_at)`),
  };
}
