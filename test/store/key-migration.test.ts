/**
 * Keys made before scopes existed keep working as they did: after the
 * migration that adds role, environments and expiry, such a key is admin for
 * every environment and never expires — on both stores, from a database
 * migrated only up to the version before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { hashToken, newToken } from '../../src/auth/keys.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { dropSchemas, newSchemaName, query, TEST_DATABASE_URL, NO_DATABASE } from '../helpers/postgres.js';
import { tempDir } from '../helpers/server.js';
import { postgresBefore, sqliteBefore } from '../helpers/old-store.js';

const SCOPES_SQLITE = SQLITE_MIGRATIONS.find((m) => m.name.startsWith('key scopes'))!.version;
const SCOPES_POSTGRES = POSTGRES_MIGRATIONS.find((m) => m.name.startsWith('key scopes'))!.version;

test('sqlite: a key from before scopes is admin, every environment, no expiry', async () => {
  const file = path.join(tempDir(), 'runset.db');
  const db = sqliteBefore(file, SCOPES_SQLITE);
  const token = newToken();
  db.prepare("INSERT INTO api_keys (id, name, hash, created_at) VALUES ('old', 'old key', ?, '2026-01-01T00:00:00.000Z')").run(hashToken(token));
  db.close();
  const store = new SqliteStore(file);
  await store.migrate();
  try {
    const key = await store.keys.findActiveByHash(hashToken(token));
    assert.deepEqual([key?.id, key?.role, key?.envs, key?.expiresAt], ['old', 'admin', null, null]);
  } finally {
    await store.close();
  }
});

test('postgres: a key from before scopes is admin, every environment, no expiry', { skip: TEST_DATABASE_URL ? undefined : NO_DATABASE }, async () => {
  const url = TEST_DATABASE_URL!;
  const schema = newSchemaName('runset_keymig');
  try {
    const s = await postgresBefore(url, schema, SCOPES_POSTGRES);
    const token = newToken();
    await query(url, `INSERT INTO ${s}.api_keys (id, name, hash, created_at) VALUES ('old', 'old key', $1, now())`, [hashToken(token)]);
    const store = new PostgresStore({ connectionString: url, schema });
    await store.migrate();
    try {
      const key = await store.keys.findActiveByHash(hashToken(token));
      assert.deepEqual([key?.id, key?.role, key?.envs, key?.expiresAt], ['old', 'admin', null, null]);
    } finally {
      await store.close();
    }
  } finally {
    await dropSchemas(url, [schema]);
  }
});
