/**
 * Opening the store a process was told to use, migrated: PostgreSQL when a
 * database URL is given, else the SQLite file in the data dir. Apart from the
 * composition root (src/main.ts), so that a store command of the CLI (`keys`,
 * `backup`, `prune`…) loads the store and nothing of the API, the scheduler or
 * the executors.
 */
import path from 'node:path';
import type { Store } from './store.js';
import { SqliteStore } from './sqlite/index.js';
import { STORE_FILE } from './sqlite-file.js';

export interface StoreLocation {
  /** PostgreSQL when given; the SQLite file in dataDir otherwise. */
  databaseUrl: string | undefined;
  databaseSchema: string;
  dataDir: string;
  poolSize?: number;
}

/** The store, migrated; `owner`: this process owns the SQLite file (serve), not a command borrowing it. */
export async function openStore(options: StoreLocation, owner = false): Promise<Store> {
  let store: Store;
  if (options.databaseUrl) {
    const { PostgresStore } = await import('./postgres/index.js');
    store = new PostgresStore({ connectionString: options.databaseUrl, schema: options.databaseSchema, poolSize: options.poolSize });
  } else {
    store = new SqliteStore(path.join(options.dataDir, STORE_FILE), { owner });
  }
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
