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

const WORKER_SQLITE = SQLITE_MIGRATIONS.find((m) => m.name === 'key roles: worker')!.version;
const WORKER_POSTGRES = POSTGRES_MIGRATIONS.find((m) => m.name === 'key roles: worker')!.version;

/** What the upgrade must keep of each key: every column a key is judged by. */
const scopeOf = (k: { id: string; name: string; role: string; envs: string[] | null; expiresAt: string | null; revokedAt: string | null } | undefined) =>
  k && [k.id, k.name, k.role, k.envs, k.expiresAt === null ? null : Date.parse(k.expiresAt), k.revokedAt === null];

test('sqlite: the worker role migration rebuilds the keys table and keeps every key, its scope and its sessions', async () => {
  const file = path.join(tempDir(), 'runset.db');
  const db = sqliteBefore(file, WORKER_SQLITE);
  const tokens = ['read', 'trigger', 'admin'].map(() => newToken());
  const insert = db.prepare('INSERT INTO api_keys (id, name, hash, created_at, role, envs, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  insert.run('k-read', 'reader', hashToken(tokens[0]!), '2026-01-01T00:00:00.000Z', 'read', '["staging"]', null, null);
  insert.run('k-trigger', 'ci', hashToken(tokens[1]!), '2026-01-02T00:00:00.000Z', 'trigger', null, '2099-01-01T00:00:00.000Z', null);
  insert.run('k-admin', 'ops', hashToken(tokens[2]!), '2026-01-03T00:00:00.000Z', 'admin', null, null, '2026-02-01T00:00:00.000Z');
  db.prepare('INSERT INTO sessions (id_hash, key_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)').run('s1', 'k-read', 'csrf', '2026-01-01T00:00:00.000Z', Date.now() + 3_600_000);
  const before = db.prepare('SELECT * FROM api_keys ORDER BY id').all();
  db.close();
  const store = new SqliteStore(file);
  await store.migrate();
  try {
    const keys = await store.keys.list();
    assert.deepEqual(keys.map(scopeOf), [
      ['k-read', 'reader', 'read', ['staging'], null, true],
      ['k-trigger', 'ci', 'trigger', null, Date.parse('2099-01-01T00:00:00.000Z'), true],
      ['k-admin', 'ops', 'admin', null, null, false],
    ]);
    assert.equal((await store.keys.findActiveByHash(hashToken(tokens[0]!)))?.id, 'k-read');
    assert.equal((await store.keys.findSession('s1'))?.key.id, 'k-read', 'the session still names its key');
    await store.keys.create({ id: 'k-worker', name: 'runners', hash: hashToken(newToken()), role: 'worker', envs: ['staging'] });
    assert.equal((await store.keys.list()).find((k) => k.id === 'k-worker')?.role, 'worker');
  } finally {
    await store.close();
  }
  const after = new (await import('better-sqlite3')).default(file);
  try {
    const kept = after.prepare('SELECT id, name, hash, created_at, last_used_at, revoked_at, role, envs, expires_at FROM api_keys WHERE id <> ? ORDER BY id').all('k-worker');
    assert.deepEqual(kept, before, 'every column of every key, byte for byte');
    assert.deepEqual(after.pragma('foreign_key_check'), []);
    assert.match(String((after.prepare("SELECT sql FROM sqlite_master WHERE name = 'sessions'").get() as { sql: string }).sql), /REFERENCES api_keys\(id\)/);
    assert.throws(() => after.prepare("INSERT INTO api_keys (id, name, hash, created_at, role) VALUES ('x', 'x', 'x', 'x', 'root')").run(), /CHECK/);
  } finally {
    after.close();
  }
});

test('postgres: the worker role migration keeps every key and accepts worker keys', { skip: TEST_DATABASE_URL ? undefined : NO_DATABASE }, async () => {
  const url = TEST_DATABASE_URL!;
  const schema = newSchemaName('runset_keyworker');
  try {
    const s = await postgresBefore(url, schema, WORKER_POSTGRES);
    const token = newToken();
    await query(url, `INSERT INTO ${s}.api_keys (id, name, hash, created_at, role, envs) VALUES ('k-read', 'reader', $1, now(), 'read', ARRAY['staging'])`, [hashToken(token)]);
    await query(url, `INSERT INTO ${s}.sessions (id_hash, key_id, csrf_token, created_at, expires_at) VALUES ('s1', 'k-read', 'csrf', now(), now() + interval '1 hour')`);
    const store = new PostgresStore({ connectionString: url, schema });
    await store.migrate();
    try {
      assert.deepEqual(scopeOf(await store.keys.findActiveByHash(hashToken(token))), ['k-read', 'reader', 'read', ['staging'], null, true]);
      assert.equal((await store.keys.findSession('s1'))?.key.id, 'k-read');
      await store.keys.create({ id: 'k-worker', name: 'runners', hash: hashToken(newToken()), role: 'worker', envs: null });
      assert.equal((await store.keys.list()).find((k) => k.id === 'k-worker')?.role, 'worker');
      await assert.rejects(query(url, `INSERT INTO ${s}.api_keys (id, name, hash, created_at, role) VALUES ('x', 'x', 'x', now(), 'root')`), /check constraint/);
    } finally {
      await store.close();
    }
  } finally {
    await dropSchemas(url, [schema]);
  }
});
