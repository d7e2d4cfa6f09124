/**
 * `runset prune --older-than 30d [--dry-run] [--json]`: removes now, straight on
 * the store, what `serve --retention` removes periodically (src/retention/sets.ts):
 * sets that ended longer ago, with their members, artifacts and per-set records,
 * then the suite versions that no set left and no name uses (src/retention/suites.ts).
 */
import type { Command } from 'commander';
import { OptionError, parseRetentionOption, resolvePath } from '../config/options.js';
import type { PruneResult } from '../retention/sets.js';
import { storeOptions, withStore, type StoreFlags } from './store-options.js';

interface PruneFlags extends StoreFlags {
  olderThan: string;
  dryRun?: boolean;
  json?: boolean;
}

/** "1.5 MiB" */
function bytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${n} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

function describe(result: PruneResult & { suiteVersions?: number }, dryRun: boolean): string {
  const verb = dryRun ? 'would remove' : 'removed';
  const suites = result.suiteVersions === undefined ? '' : `; and ${result.suiteVersions} suite version(s) uploaded before then that no set or name uses`;
  return `${verb} ${result.sets} set(s) that ended before ${result.before}: ${result.members} member(s), ${result.artifacts} artifact(s), ${bytes(result.artifactBytes)} of artifact files${suites}\n`;
}

/**
 * The embedded store's serving process keeps the sets it serves in memory, so
 * sets removed under it would still be served: pruning takes the data dir's
 * lock, as `serve` does, and refuses while a server holds it.
 */
async function lockDataDir(flags: PruneFlags): Promise<() => void> {
  const { lockDataDir, DataDirLockedError } = await import('../store/sqlite-file.js');
  try {
    return lockDataDir(resolvePath(flags.dataDir));
  } catch (err) {
    if (!(err instanceof DataDirLockedError)) throw err;
    throw new OptionError(
      `a runset server serves the SQLite store in ${resolvePath(flags.dataDir)} and keeps the sets it serves in memory: stop it to prune now, or let it remove old sets itself (serve --retention, e.g. 30d); --dry-run works while it runs`,
    );
  }
}

export function registerPruneCommand(program: Command): void {
  storeOptions(program.command('prune').description('remove sets that ended longer ago than --older-than, with their members, artifacts and records'))
    .requiredOption('--older-than <duration>', 'remove sets that ended longer ago than this, e.g. 30d')
    .option('--dry-run', 'print what would be removed; remove nothing')
    .option('--json', 'print JSON')
    .action(async (flags: PruneFlags) => {
      const retentionMs = parseRetentionOption('--older-than', flags.olderThan, { minMs: 0, example: '30d' });
      const dryRun = flags.dryRun === true;
      const unlock = dryRun || flags.databaseUrl ? () => undefined : await lockDataDir(flags);
      try {
        const [{ countEndedSets, removeEndedSets }, { removeUnusedSuiteVersions }, { artifactBlobsFor, suiteArchivesFor }] = await Promise.all([
          import('../retention/sets.js'), import('../retention/suites.js'), import('../main.js'),
        ]);
        const dataDir = resolvePath(flags.dataDir);
        const result = await withStore(flags, async (store) => {
          if (dryRun) return countEndedSets(store, retentionMs);
          const sets = await removeEndedSets(store, artifactBlobsFor(store, dataDir), { retentionMs });
          // After the sets: a version their removal left unused goes in the same prune.
          const suites = await removeUnusedSuiteVersions(store, suiteArchivesFor(store, dataDir), retentionMs);
          return { ...sets, suiteVersions: suites.versions };
        });
        process.stdout.write(flags.json ? `${JSON.stringify({ dryRun, ...result }, null, 2)}\n` : describe(result, dryRun));
      } finally {
        unlock();
      }
    });
}
