/**
 * `runset suites push DIR` and `runset suites list`: suite versions through the
 * API (RUNSET_URL, RUNSET_API_KEY), like `trigger`. Push packs the folder of a
 * runset.config.yaml, lists its Playwright entries here (where the
 * dependencies are installed) and uploads it only when the server lacks it;
 * stdout holds only the id (`ID=$(runset suites push e2e)`), stderr the rest.
 * Exit 3 on any error. The packing modules load only when push runs.
 */
import type { Command } from 'commander';
import { EXIT_CODES, type TriggerEnv, type TriggerIo } from '../client/trigger-context.js';
import type { SuiteVersion } from '../client/suites.js';
import { parseSuiteName } from './suite-name.js';
import { alignedTable } from './table.js';

const ENV_HELP = '\nEnvironment:\n  RUNSET_URL      base address of the runset API, ending in /api\n  RUNSET_API_KEY  API key with the trigger role to push (never printed)';

export function registerSuitesCommand(program: Command): void {
  const suites = program.command('suites').description('suite versions: the tests a set runs, uploaded from a checkout (needs RUNSET_URL and RUNSET_API_KEY)');
  suites
    .command('push')
    .description("pack the folder of a runset.config.yaml, list its Playwright tests and upload it (nothing is sent when the server has it); prints the version's id")
    .argument('<dir>', 'the folder of the suite\'s runset.config.yaml')
    .option('--name <name>', 'publish it under this name too (main, pr-123): `trigger --suite-name NAME` runs it', parseSuiteName)
    .option('--commit <sha>', "the commit it was packed from, shown with the sets that run it (default: the CI's, e.g. GITHUB_SHA)")
    .addHelpText('after', ENV_HELP)
    .action(async (dir: string, flags: { name?: string; commit?: string }) => {
      process.exitCode = await runSuitesPush({ dir, name: flags.name, commit: flags.commit }, process.env, { stdout: process.stdout, stderr: process.stderr });
    });
  suites
    .command('list')
    .description('list the stored suite versions, newest first')
    .option('--json', 'print the list as JSON')
    .addHelpText('after', ENV_HELP)
    .action(async (flags: { json?: boolean }) => {
      process.exitCode = await runSuitesList(flags.json === true, process.env, { stdout: process.stdout, stderr: process.stderr });
    });
}

export async function runSuitesPush(options: { dir: string; name?: string | undefined; commit?: string | undefined }, env: TriggerEnv, io: TriggerIo, fetch?: typeof globalThis.fetch): Promise<number> {
  const id = await pushAndSay(options, env, io, fetch);
  if (id === null) return EXIT_CODES.error;
  io.stdout.write(`${id}\n`);
  return EXIT_CODES.success;
}

/** The push and its line on stderr (`push`, `trigger --suite DIR`); resolves with the id, or null when it failed (said on stderr). */
export async function pushAndSay(options: { dir: string; name?: string | undefined; commit?: string | undefined }, env: TriggerEnv, io: TriggerIo, fetch?: typeof globalThis.fetch): Promise<string | null> {
  const { runClientCommand } = await import('./client-command.js');
  const { pushSuite, describePush } = await import('./suite-push.js');
  let id: string | null = null;
  await runClientCommand(env, io, fetch, async (client) => {
    const result = await pushSuite(client, options, env, io.stderr);
    io.stderr.write(`runset: ${describePush(result, options.name)}\n`);
    id = result.id;
  });
  return id;
}

export async function runSuitesList(json: boolean, env: TriggerEnv, io: TriggerIo, fetch?: typeof globalThis.fetch): Promise<number> {
  const { runClientCommand } = await import('./client-command.js');
  return runClientCommand(env, io, fetch, async (client) => {
    const versions = await client.listSuiteVersions();
    io.stdout.write(json ? `${JSON.stringify(versions, null, 2)}\n` : suitesTable(versions));
  });
}

/** One line per version, columns aligned; names last (the longest column). */
export function suitesTable(versions: readonly SuiteVersion[]): string {
  if (versions.length === 0) return 'no suite versions (push one with `runset suites push DIR`)\n';
  const rows = [
    ['ID', 'SIZE', 'FILES', 'CREATED', 'COMMIT', 'SETS', 'NAMES'],
    ...versions.map((v) => [v.id.slice(0, 12), `${(v.size / 1000).toFixed(1)} kB`, String(v.files), v.createdAt.slice(0, 19).replace('T', ' '), v.commit?.slice(0, 12) ?? '-', String(v.sets), v.names.join(', ') || '-']),
  ];
  return alignedTable(rows);
}
