/**
 * `runset backup FILE` and `runset restore FILE` — the embedded (SQLite)
 * store's backups, with the suite archives and artifacts its rows name;
 * PostgreSQL deployments use pg_dump, which holds those too (docs/deploy.md).
 * Neither holds the secret key: each says where it must come from.
 */
import path from 'node:path';
import { Command, Option } from 'commander';
import { DEFAULTS, resolvePath } from '../config/options.js';
import type { StoreSummary } from '../store/sqlite-file.js';

interface BackupFlags {
  dataDir: string;
  databaseUrl?: string;
}

function dataDirOption(cmd: Command): Command {
  return cmd
    .addOption(new Option('--data-dir <dir>', 'the server data dir (SQLite store)').env('RUNSET_DATA_DIR').default(DEFAULTS.dataDir))
    .addOption(new Option('--database-url <url>', 'set when the deployment uses PostgreSQL (then use pg_dump)').env('RUNSET_DATABASE_URL'));
}

function refusePostgres(flags: BackupFlags): void {
  if (flags.databaseUrl) {
    throw new Error(`this deployment keeps its store in PostgreSQL (--database-url / RUNSET_DATABASE_URL): back it up with pg_dump -n <schema>, which holds the sets, keys, suite archives and artifacts (all are in the database), see docs/deploy.md; ${SECRET_KEY_NOTE}`);
  }
}

/** Where the key that seals stored secrets comes from: never from a backup (one that held it would open what it seals). */
const SECRET_KEY_NOTE =
  'the secret key is not in any backup: the restored server needs the same one, its data dir\'s secret.key copied across (kept apart from the backup) or the same RUNSET_SECRET_KEY; without it the stored secret values cannot be opened';

function describe(summary: StoreSummary): string {
  const carried = summary.carried
    ? `${summary.carried.archives} suite archive(s), ${summary.carried.artifacts} artifact(s)${summary.carried.missing > 0 ? ` (${summary.carried.missing} named but already missing from the data dir)` : ''}`
    : 'no suite archives or artifacts (a backup from an older runset)';
  return `${summary.file}: ${summary.sets} set(s), ${summary.keys} key(s), ${carried}, schema version ${summary.schemaVersion}, ${(summary.bytes / 1024).toFixed(0)} KiB`;
}

export function registerBackupCommands(program: Command): void {
  dataDirOption(program.command('backup').description('copy the SQLite store, with its suite archives and artifacts, to FILE, consistently, while serve runs'))
    .argument('<file>', 'the backup file to write (must not exist)')
    .action(async (file: string, flags: BackupFlags) => {
      refusePostgres(flags);
      const { backupStore, STORE_FILE } = await import('../store/sqlite-file.js');
      const summary = await backupStore(path.join(resolvePath(flags.dataDir), STORE_FILE), resolvePath(file));
      process.stderr.write(`runset: backed up ${describe(summary)}\nrunset: ${SECRET_KEY_NOTE}\n`);
    });

  dataDirOption(program.command('restore').description('make FILE the SQLite store of --data-dir (no serve may be running on it)'))
    .argument('<file>', 'a file written by `runset backup`')
    .option('--force', 'replace the store the data dir holds (it is kept beside it as runset.db.before-restore-<time>)')
    .action(async (file: string, flags: BackupFlags & { force?: boolean }) => {
      refusePostgres(flags);
      const { restoreStore } = await import('../store/sqlite-file.js');
      const restored = await restoreStore(resolvePath(file), resolvePath(flags.dataDir), { force: flags.force === true });
      if (restored.keptAside) process.stderr.write(`runset: the store that was there is kept as ${restored.keptAside}\n`);
      process.stderr.write(`runset: restored ${describe(restored.summary)}; start serve on it to use it (newer migrations apply then)\nrunset: ${SECRET_KEY_NOTE}\n`);
    });
}
