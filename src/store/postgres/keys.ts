/**
 * The PostgreSQL side of the keys sub-store: API keys (only digests are
 * stored: src/auth/keys.ts) and the dashboard's browser sessions, whose expiry
 * is judged by the database's clock. The rules of ./statements.ts hold.
 */
import type pg from 'pg';
import type { ApiKeyRecord } from '../../core/keys.js';
import type { NewSession, SessionRecord } from '../browse.js';
import type { KeysStore, NewApiKey } from '../keys.js';
import { rowMappers } from '../rows.js';
import { withClient, withTransaction, type Queryable } from './connection.js';
import { KEY_COLUMNS, msFromNow, NOW, type KeyRow, type Names } from './statements.js';

/** PostgreSQL returns timestamps as Dates. */
const { toKey } = rowMappers<Date>((value) => value.toISOString());

export class PostgresKeys implements KeysStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly n: Names,
  ) {}

  async create(key: NewApiKey): Promise<ApiKeyRecord> {
    return toKey(await withClient(this.pool, (q) => insertKey(q, this.n, key)));
  }

  async createFirst(key: NewApiKey): Promise<ApiKeyRecord | undefined> {
    const row = await withTransaction(this.pool, (tx) => insertFirstKey(tx, this.n, key));
    return row && toKey(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    return (await withClient(this.pool, (q) => listKeys(q, this.n))).map(toKey);
  }

  revoke(id: string): Promise<boolean> {
    return withClient(this.pool, (q) => revokeKey(q, this.n, id));
  }

  async findActiveByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const row = await withClient(this.pool, (q) => findActiveKey(q, this.n, hash));
    return row ? toKey(row) : undefined;
  }

  async touch(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await withClient(this.pool, (q) => touchKeys(q, this.n, ids));
  }

  async createSession(session: NewSession): Promise<SessionRecord> {
    const row = await withTransaction(this.pool, async (tx) => {
      await deleteExpiredSessions(tx, this.n);
      await insertSession(tx, this.n, session);
      return findSession(tx, this.n, session.idHash);
    });
    if (!row) throw new Error('the session vanished right after it was stored (was its key revoked?)');
    return toSession(row);
  }

  async findSession(idHash: string): Promise<SessionRecord | undefined> {
    const row = await withClient(this.pool, (q) => findSession(q, this.n, idHash));
    return row ? toSession(row) : undefined;
  }

  async deleteSession(idHash: string): Promise<void> {
    await withClient(this.pool, (q) => deleteSession(q, this.n, idHash));
  }
}

function toSession(row: SessionRow): SessionRecord {
  return { key: toKey(row), csrfToken: row.csrf_token, expiresAt: row.session_expires_at.toISOString() };
}

async function insertKey(q: Queryable, n: Names, key: NewApiKey): Promise<KeyRow> {
  const { rows } = await q.query<KeyRow>({
    name: 'runset.insertKey',
    text: `
      INSERT INTO ${n.keys} (id, name, hash, role, envs, expires_at, created_at)
      VALUES ($1, $2, $3, $4, $5::text[], $6::timestamptz, ${NOW}) RETURNING ${KEY_COLUMNS}`,
    values: [key.id, key.name, key.hash, key.role ?? 'admin', key.envs ? [...key.envs] : null, key.expiresAt ?? null],
  });
  return rows[0]!;
}

/**
 * Inserts the key only when the table holds none (revoked and expired keys
 * count); undefined when it holds one. In a transaction: the lock queues
 * processes starting at once, so the second sees the first's key. It blocks
 * key writes for a moment, never key lookups (reads take no conflicting lock).
 */
async function insertFirstKey(tx: Queryable, n: Names, key: NewApiKey): Promise<KeyRow | undefined> {
  await tx.query(`LOCK TABLE ${n.keys} IN SHARE ROW EXCLUSIVE MODE`);
  const { rows } = await tx.query<KeyRow>({
    name: 'runset.insertFirstKey',
    text: `
      INSERT INTO ${n.keys} (id, name, hash, role, envs, expires_at, created_at)
      SELECT $1, $2, $3, $4, $5::text[], $6::timestamptz, ${NOW} WHERE NOT EXISTS (SELECT 1 FROM ${n.keys}) RETURNING ${KEY_COLUMNS}`,
    values: [key.id, key.name, key.hash, key.role ?? 'admin', key.envs ? [...key.envs] : null, key.expiresAt ?? null],
  });
  return rows[0];
}

async function listKeys(q: Queryable, n: Names): Promise<KeyRow[]> {
  const { rows } = await q.query<KeyRow>({
    name: 'runset.listKeys',
    text: `SELECT ${KEY_COLUMNS} FROM ${n.keys} ORDER BY created_at, id`,
  });
  return rows;
}

/** Keeps the first revocation time; matches (and so counts) an already revoked key. */
async function revokeKey(q: Queryable, n: Names, id: string): Promise<boolean> {
  const res = await q.query({
    name: 'runset.revokeKey',
    text: `UPDATE ${n.keys} SET revoked_at = COALESCE(revoked_at, ${NOW}) WHERE id = $1`,
    values: [id],
  });
  return res.rowCount === 1;
}

async function findActiveKey(q: Queryable, n: Names, hash: string): Promise<KeyRow | undefined> {
  const { rows } = await q.query<KeyRow>({
    name: 'runset.findActiveKey',
    text: `SELECT ${KEY_COLUMNS} FROM ${n.keys} WHERE hash = $1 AND revoked_at IS NULL`,
    values: [hash],
  });
  return rows[0];
}

async function touchKeys(q: Queryable, n: Names, ids: string[]): Promise<void> {
  await q.query({
    name: 'runset.touchKeys',
    text: `UPDATE ${n.keys} SET last_used_at = ${NOW} WHERE id = ANY($1::text[])`,
    values: [ids],
  });
}

// ── sessions ──

type SessionRow = KeyRow & { csrf_token: string; session_expires_at: Date };

async function deleteExpiredSessions(q: Queryable, n: Names): Promise<void> {
  await q.query({ name: 'runset.browse.deleteExpiredSessions', text: `DELETE FROM ${n.sessions} WHERE expires_at <= now()` });
}

async function insertSession(
  q: Queryable,
  n: Names,
  s: { idHash: string; keyId: string; csrfToken: string; ttlMs: number },
): Promise<void> {
  await q.query({
    name: 'runset.browse.insertSession',
    text: `
      INSERT INTO ${n.sessions} (id_hash, key_id, csrf_token, expires_at)
      VALUES ($1, $2, $3, ${msFromNow('$4')})`,
    values: [s.idHash, s.keyId, s.csrfToken, s.ttlMs],
  });
}

/** A revoked key ends its sessions: the join drops them at once, for every process. */
async function findSession(q: Queryable, n: Names, idHash: string): Promise<SessionRow | undefined> {
  const { rows } = await q.query<SessionRow>({
    name: 'runset.browse.findSession',
    text: `
      SELECT k.id, k.name, k.role, k.envs, k.expires_at, k.created_at, k.last_used_at, k.revoked_at,
        s.csrf_token, s.expires_at AS session_expires_at
      FROM ${n.sessions} s JOIN ${n.keys} k ON k.id = s.key_id
      WHERE s.id_hash = $1 AND s.expires_at > now() AND k.revoked_at IS NULL`,
    values: [idHash],
  });
  return rows[0];
}

async function deleteSession(q: Queryable, n: Names, idHash: string): Promise<void> {
  await q.query({ name: 'runset.browse.deleteSession', text: `DELETE FROM ${n.sessions} WHERE id_hash = $1`, values: [idHash] });
}
