/**
 * `runset quarantine add|list|remove`: quarantined tests through the API
 * (RUNSET_URL, RUNSET_API_KEY), like `suites`. A quarantined test still runs;
 * its failure no longer fails the sets created while it is quarantined. Exit 3
 * on any error; the client loads only when a subcommand runs.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { DurationError, parseDuration } from '../core/duration.js';
import { QUARANTINE_DAYS } from '../core/quarantine.js';
import type { TriggerEnv, TriggerIo } from '../client/trigger-context.js';
import type { QuarantineEntry } from '../client/quarantine.js';
import { alignedTable } from './table.js';

const ENV_HELP = '\nEnvironment:\n  RUNSET_URL      base address of the runset API, ending in /api\n  RUNSET_API_KEY  API key (trigger role to add and remove, read to list; never printed)';
const LONGEST_MS = QUARANTINE_DAYS.max * 86_400_000;

/** `--until 14d`: how long from now, as a duration. */
function parseUntil(value: string): number {
  try {
    return parseDuration(value, LONGEST_MS);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof DurationError ? error.message : String(error));
  }
}

interface AddFlags {
  env: string;
  reason: string;
  until?: number;
}

export function registerQuarantineCommand(program: Command): void {
  const quarantine = program
    .command('quarantine')
    .description("quarantined tests: they still run, but their failures do not fail a set (needs RUNSET_URL and RUNSET_API_KEY)");
  quarantine
    .command('add')
    .description('quarantine a test of an environment (sets created from now on), or replace its quarantine')
    .argument('<name>', "the test's exact name, as the members list shows it")
    .requiredOption('--env <env>', 'the environment')
    .requiredOption('--reason <text>', 'why, and who owns the fix (shown wherever the quarantine is)')
    .option('--until <duration>', 'how long until it ends by itself: 14d (default), 36h, at most 365d', parseUntil)
    .addHelpText('after', ENV_HELP)
    .action(async (name: string, flags: AddFlags) => {
      process.exitCode = await runQuarantineAdd(name, flags, process.env, { stdout: process.stdout, stderr: process.stderr });
    });
  quarantine
    .command('list')
    .description('list the quarantines in force')
    .option('--env <env>', 'only this environment')
    .option('--json', 'print the list as JSON')
    .addHelpText('after', ENV_HELP)
    .action(async (flags: { env?: string; json?: boolean }) => {
      process.exitCode = await runQuarantineList(flags, process.env, { stdout: process.stdout, stderr: process.stderr });
    });
  quarantine
    .command('remove')
    .description("end a test's quarantine now")
    .argument('<name>', "the test's exact name")
    .requiredOption('--env <env>', 'the environment')
    .addHelpText('after', ENV_HELP)
    .action(async (name: string, flags: { env: string }) => {
      process.exitCode = await runQuarantineRemove(name, flags.env, process.env, { stdout: process.stdout, stderr: process.stderr });
    });
}

export async function runQuarantineAdd(name: string, flags: AddFlags, env: TriggerEnv, io: TriggerIo, fetch?: typeof globalThis.fetch): Promise<number> {
  const { runClientCommand } = await import('./client-command.js');
  return runClientCommand(env, io, fetch, async (client) => {
    const until = flags.until === undefined ? undefined : new Date(Date.now() + flags.until).toISOString();
    const result = await client.addQuarantine({ env: flags.env, name, reason: flags.reason, ...(until ? { until } : {}) });
    const verb = result.created ? 'quarantined' : 'quarantine replaced:';
    io.stderr.write(`runset: ${verb} "${name}" in ${flags.env} until ${result.entry.until.slice(0, 16).replace('T', ' ')} UTC\n`);
    if (!result.knownTest) io.stderr.write(`runset: warning: no test named "${name}" has run in ${flags.env} or is declared by its configuration; check the name (the members list shows it)\n`);
  });
}

export async function runQuarantineList(flags: { env?: string; json?: boolean }, env: TriggerEnv, io: TriggerIo, fetch?: typeof globalThis.fetch): Promise<number> {
  const { runClientCommand } = await import('./client-command.js');
  return runClientCommand(env, io, fetch, async (client) => {
    const entries = await client.listQuarantine(flags.env);
    io.stdout.write(flags.json ? `${JSON.stringify(entries, null, 2)}\n` : quarantineTable(entries));
  });
}

export async function runQuarantineRemove(name: string, environment: string, env: TriggerEnv, io: TriggerIo, fetch?: typeof globalThis.fetch): Promise<number> {
  const { runClientCommand } = await import('./client-command.js');
  return runClientCommand(env, io, fetch, async (client) => {
    await client.removeQuarantine(environment, name);
    io.stderr.write(`runset: quarantine of "${name}" in ${environment} ended\n`);
  });
}

/** One line per entry, columns aligned; the reason last (the longest column). */
export function quarantineTable(entries: readonly QuarantineEntry[]): string {
  if (entries.length === 0) return 'no quarantined tests\n';
  const when = (iso: string) => iso.slice(0, 16).replace('T', ' ');
  const rows = [['ENV', 'TEST', 'UNTIL (UTC)', 'BY', 'REASON'], ...entries.map((e) => [e.env, e.name, when(e.until), e.createdBy?.keyName ?? '-', e.reason])];
  return alignedTable(rows);
}
