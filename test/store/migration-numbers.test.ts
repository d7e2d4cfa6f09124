/**
 * One ladder of migration numbers for both stores (src/store/sqlite/migration-numbers.ts):
 * each step has the same number on SQLite as on PostgreSQL, and a SQLite store
 * that recorded the old numbers, stopped at any step, is migrated onto the
 * ladder without running a step again (its SQL would fail: a column or table
 * already there) or skipping one (its schema ends equal to a new store's).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type Database from 'better-sqlite3';
import BetterSqlite from 'better-sqlite3';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../helpers/server.js';
import { sqliteBefore } from '../helpers/old-store.js';

/** The number a SQLite store recorded for a step before the shared ladder. */
function oldNumber(version: number): number {
  if (version >= 6 && version <= 23) return version - 1;
  if (version === 25) return 24;
  return version;
}

const ladder = (file: string) => {
  const db = new BetterSqlite(file, { readonly: true });
  try {
    return {
      steps: db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all(),
      schema: db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name <> 'sqlite_sequence' ORDER BY type, name").all(),
      retention: (db.prepare("SELECT value FROM store_settings WHERE name = 'retention_when_unset'").get() as { value: string } | undefined)?.value,
    };
  } finally {
    db.close();
  }
};

async function migrated(file: string): Promise<void> {
  const store = new SqliteStore(file);
  await store.migrate();
  await store.close();
}

test('each step has the same number on both stores; PostgreSQL alone has its own step 5', () => {
  const pg = new Map(POSTGRES_MIGRATIONS.map((m) => [m.name, m.version]));
  for (const m of SQLITE_MIGRATIONS) assert.equal(pg.get(m.name), m.version, m.name);
  const sqliteNames = new Set(SQLITE_MIGRATIONS.map((m) => m.name));
  assert.deepEqual(POSTGRES_MIGRATIONS.filter((m) => !sqliteNames.has(m.name)).map((m) => m.version), [5]);
});

test('a SQLite store at any old number is migrated onto the ladder: no step run twice, none skipped', async () => {
  const fresh = path.join(tempDir('runset-ladder-'), 'runset.db');
  await migrated(fresh);
  const expected = ladder(fresh);
  const retentionVersion = SQLITE_MIGRATIONS.find((m) => m.name === 'set retention')!.version;
  const versions = [...SQLITE_MIGRATIONS.map((m) => m.version), Infinity].sort((a, b) => a - b);
  for (const before of versions.slice(1)) {
    const file = path.join(tempDir('runset-ladder-'), 'runset.db');
    const db: Database.Database = sqliteBefore(file, before);
    // As an older runset recorded it: its own numbers (each old number is lower, so renumber upwards).
    const recorded = (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((r) => r.version);
    for (const v of recorded) db.prepare('UPDATE schema_migrations SET version = ? WHERE version = ?').run(oldNumber(v), v);
    db.close();
    await migrated(file);
    await migrated(file);
    const got = ladder(file);
    assert.deepEqual(got.steps, expected.steps, `stopped before ${before}: the ladder's numbers and names`);
    assert.deepEqual(got.schema, expected.schema, `stopped before ${before}: the schema of a new store`);
    assert.equal(got.retention, before <= retentionVersion ? 'keep' : 'default', `stopped before ${before}: retention read from the renumbered steps`);
  }
});
