/**
 * SQL for Idempotency-Key on create (PostgreSQL). The insert races safely: of two
 * transactions with one key, the second waits on the primary key, then finds the
 * first's row and creates nothing.
 */
import type { Queryable } from './connection.js';
import { msFromNow, type Names } from './sql.js';

export async function deleteExpiredIdempotency(q: Queryable, n: Names): Promise<void> {
  await q.query({ name: 'runset.idem.deleteExpired', text: `DELETE FROM ${n.idempotency} WHERE expires_at <= now()` });
}

/** Takes the key for `setId`; returns undefined when it was already taken (and not expired). */
export async function takeIdempotencyKey(
  q: Queryable,
  n: Names,
  args: { keyId: string; key: string; bodyHash: string; setId: string; ttlMs: number },
): Promise<boolean> {
  const { rowCount } = await q.query({
    name: 'runset.idem.take',
    text: `
      INSERT INTO ${n.idempotency} (key_id, key, body_hash, set_id, expires_at)
      VALUES ($1, $2, $3, $4, ${msFromNow('$5')})
      ON CONFLICT (key_id, key) DO NOTHING`,
    values: [args.keyId, args.key, args.bodyHash, args.setId, args.ttlMs],
  });
  return rowCount === 1;
}

export async function findIdempotencyKey(
  q: Queryable,
  n: Names,
  keyId: string,
  key: string,
): Promise<{ set_id: string; body_hash: string } | undefined> {
  const { rows } = await q.query<{ set_id: string; body_hash: string }>({
    name: 'runset.idem.find',
    text: `SELECT set_id, body_hash FROM ${n.idempotency} WHERE key_id = $1 AND key = $2 AND expires_at > now()`,
    values: [keyId, key],
  });
  return rows[0];
}
