/**
 * The flags that name a store (`--data-dir`, or `--database-url` and
 * `--database-schema`) for commands that work on it directly, whether or not a
 * server runs: `keys`, `prune`.
 */
import { Command, Option } from 'commander';
import { DEFAULTS, resolvePath } from '../config/options.js';
import type { Store } from '../store/store.js';

export interface StoreFlags {
  dataDir: string;
  databaseUrl?: string;
  databaseSchema: string;
}

export function storeOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--data-dir <dir>', 'the server data dir (SQLite store)').env('RUNSET_DATA_DIR').default(DEFAULTS.dataDir))
    .addOption(new Option('--database-url <url>', 'PostgreSQL URL').env('RUNSET_DATABASE_URL'))
    .addOption(new Option('--database-schema <name>', 'PostgreSQL schema').env('RUNSET_DATABASE_SCHEMA').default(DEFAULTS.databaseSchema));
}

export async function withStore<T>(flags: StoreFlags, work: (store: Store) => Promise<T>): Promise<T> {
  const { openStore } = await import('../store/open.js'); // the store drivers load only when a store command runs
  const store = await openStore({
    dataDir: resolvePath(flags.dataDir),
    databaseUrl: flags.databaseUrl || undefined,
    databaseSchema: flags.databaseSchema,
  });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
