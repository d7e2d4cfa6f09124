/**
 * A store as an older runset left it: the schema of every migration below a
 * version, applied and recorded the way each store's migrate() does, so that
 * today's migrate() (or `runset serve`) upgrades it from there. For the tests
 * that prove upgrades keep data.
 */
import Database from 'better-sqlite3';
import { SQLITE_MIGRATIONS, sqlOf } from '../../src/store/sqlite/migrations.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { quoteIdent } from '../../src/store/postgres/connection.js';
import { query } from './postgres.js';

const below = <M extends { version: number }>(migrations: readonly M[], version: number) =>
  [...migrations].sort((a, b) => a.version - b.version).filter((m) => m.version < version);

/** A SQLite file with the migrations below `version`, open for the caller to add rows (and close). */
export function sqliteBefore(file: string, version: number): Database.Database {
  const db = new Database(file);
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  // As if each older runset applied its own: each migration finds those before it.
  const found = new Set<number>();
  for (const m of below(SQLITE_MIGRATIONS, version)) {
    db.exec(sqlOf(m, found));
    found.add(m.version);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
  }
  return db;
}

/** A PostgreSQL schema with the migrations below `version`; returns the quoted schema name for the caller's rows. */
export async function postgresBefore(url: string, schema: string, version: number): Promise<string> {
  const s = quoteIdent(schema);
  await query(url, `CREATE SCHEMA ${s}`);
  await query(url, `CREATE TABLE ${s}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  const found = new Set<number>();
  for (const m of below(POSTGRES_MIGRATIONS, version)) {
    await query(url, m.sql(s, found));
    found.add(m.version);
    await query(url, `INSERT INTO ${s}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
  }
  return s;
}
