/**
 * `runset backup FILE` and `runset restore FILE` — the embedded (SQLite)
 * store's backups; PostgreSQL deployments use pg_dump (docs/deploy.md).
 */
import path from 'node:path';
import { Command, Option } from 'commander';
import { DEFAULTS, resolvePath } from '../config/options.js';

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
    throw new Error('this deployment keeps its store in PostgreSQL (--database-url / RUNSET_DATABASE_URL): back it up with pg_dump -n <schema>, see docs/deploy.md');
  }
}

function describe(summary: { file: string; bytes: number; schemaVersion: number; sets: number; keys: number }): string {
  return `${summary.file}: ${summary.sets} set(s), ${summary.keys} key(s), schema version ${summary.schemaVersion}, ${(summary.bytes / 1024).toFixed(0)} KiB`;
}

export function registerBackupCommands(program: Command): void {
  dataDirOption(program.command('backup').description('copy the SQLite store to FILE, consistently, while serve runs'))
    .argument('<file>', 'the backup file to write (must not exist)')
    .action(async (file: string, flags: BackupFlags) => {
      refusePostgres(flags);
      const { backupStore, STORE_FILE } = await import('../store/sqlite/backup.js');
      const summary = await backupStore(path.join(resolvePath(flags.dataDir), STORE_FILE), resolvePath(file));
      process.stderr.write(`runset: backed up ${describe(summary)}\n`);
    });

  dataDirOption(program.command('restore').description('make FILE the SQLite store of --data-dir (no serve may be running on it)'))
    .argument('<file>', 'a file written by `runset backup`')
    .option('--force', 'replace the store the data dir holds (it is kept beside it as runset.db.before-restore-<time>)')
    .action(async (file: string, flags: BackupFlags & { force?: boolean }) => {
      refusePostgres(flags);
      const { restoreStore } = await import('../store/sqlite/backup.js');
      const restored = await restoreStore(resolvePath(file), resolvePath(flags.dataDir), { force: flags.force === true });
      if (restored.keptAside) process.stderr.write(`runset: the store that was there is kept as ${restored.keptAside}\n`);
      process.stderr.write(`runset: restored ${describe(restored.summary)}; start serve on it to use it (newer migrations apply then)\n`);
    });
}
