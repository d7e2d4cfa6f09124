/**
 * `runset keys create|list|revoke` — straight on the store, so they work whether
 * or not a server runs; a running server sees the change within a second.
 */
import { Command, Option } from 'commander';
import { DEFAULTS, resolvePath } from '../config/options.js';
import type { Store } from '../store/store.js';

interface StoreFlags {
  dataDir: string;
  databaseUrl?: string;
  databaseSchema: string;
}

function storeOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--data-dir <dir>', 'the server data dir (SQLite store)').env('RUNSET_DATA_DIR').default(DEFAULTS.dataDir))
    .addOption(new Option('--database-url <url>', 'PostgreSQL URL').env('RUNSET_DATABASE_URL'))
    .addOption(new Option('--database-schema <name>', 'PostgreSQL schema').env('RUNSET_DATABASE_SCHEMA').default(DEFAULTS.databaseSchema));
}

async function withStore<T>(flags: StoreFlags, work: (store: Store) => Promise<T>): Promise<T> {
  const { openStore } = await import('../main.js'); // the store drivers load only when a keys command runs
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

const NAME_PATTERN = /^[\w .@-]{1,100}$/;

export function registerKeysCommand(program: Command): void {
  const keys = program.command('keys').description('manage API keys');

  storeOptions(keys.command('create').description('create a key and print its token once, alone on stdout'))
    .requiredOption('--name <name>', 'what the key is for, e.g. "github-actions"')
    .action(async (flags: StoreFlags & { name: string }) => {
      if (!NAME_PATTERN.test(flags.name)) {
        throw new Error(`--name "${flags.name}" is not accepted; use 1-100 letters, digits, spaces or . _ @ -`);
      }
      const { token, key } = await withStore(flags, async (store) => (await import('../auth/keys.js')).createKey(store, flags.name));
      process.stdout.write(`${token}\n`);
      process.stderr.write(`created key ${key.id} (${key.name}); the token above is shown only this once\n`);
    });

  storeOptions(keys.command('list').description('list keys (id, name, created, last used, revoked); never tokens'))
    .option('--json', 'print JSON')
    .action(async (flags: StoreFlags & { json?: boolean }) => {
      const list = await withStore(flags, (store) => store.listKeys());
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
        return;
      }
      for (const k of list) {
        process.stdout.write(
          [k.id, JSON.stringify(k.name), `created=${k.createdAt}`, `last_used=${k.lastUsedAt ?? '-'}`, `revoked=${k.revokedAt ?? '-'}`].join('  ') + '\n',
        );
      }
    });

  storeOptions(keys.command('revoke').description('revoke a key by id (takes effect within a second)'))
    .argument('<id>', 'key id from `runset keys list`')
    .action(async (id: string, flags: StoreFlags) => {
      const found = await withStore(flags, (store) => store.revokeKey(id));
      if (!found) throw new Error(`no key with id ${id}; see \`runset keys list\``);
      process.stderr.write(`revoked key ${id}\n`);
    });
}
