#!/usr/bin/env node
/**
 * The `runset` command line: parses arguments (commander) and calls into the
 * modules that do the work. Exit codes: 0 ok, 2 bad configuration or usage for
 * server commands; `trigger` documents its own.
 */
import { Command, CommanderError } from 'commander';
import { VERSION } from '../core/version.js';

type Register = (program: Command) => void;

/**
 * Each command's module, loaded only when that command is asked for: a CI
 * step running `trigger` (or `trigger --help`) never loads the server, the
 * store drivers or the dashboard. With no known command (`--help`, a typo),
 * every command module loads: each keeps its heavy imports inside its action.
 */
const COMMANDS: ReadonlyArray<{ names: readonly string[]; load: () => Promise<Register> }> = [
  { names: ['serve', 'worker'], load: async () => (await import('./serve.js')).registerServeCommands },
  { names: ['keys'], load: async () => (await import('./keys.js')).registerKeysCommand },
  { names: ['trigger'], load: async () => (await import('./trigger.js')).registerTriggerCommand },
  { names: ['workers'], load: async () => (await import('./workers.js')).registerWorkersCommand },
  { names: ['cancel'], load: async () => (await import('./cancel.js')).registerCancelCommand },
  { names: ['suites'], load: async () => (await import('./suites.js')).registerSuitesCommand },
  { names: ['mcp'], load: async () => (await import('./mcp.js')).registerMcpCommand },
  { names: ['quarantine'], load: async () => (await import('./quarantine.js')).registerQuarantineCommand },
  { names: ['demo'], load: async () => (await import('./demo.js')).registerDemoCommand },
  { names: ['prune'], load: async () => (await import('./prune.js')).registerPruneCommand },
  { names: ['check'], load: async () => (await import('./check.js')).registerCheckCommand },
  { names: ['init'], load: async () => (await import('./init.js')).registerInitCommand },
  { names: ['backup', 'restore'], load: async () => (await import('./backup.js')).registerBackupCommands },
];

const program = new Command('runset')
  .description('Run end-to-end tests on demand for CI pipelines.')
  .version(VERSION)
  .showHelpAfterError()
  .exitOverride();

// The program has no option that takes a value, so the first word is the command.
const asked = process.argv.slice(2).find((arg) => !arg.startsWith('-'));
const wanted = COMMANDS.filter((c) => asked !== undefined && c.names.includes(asked));
for (const register of await Promise.all((wanted.length > 0 ? wanted : COMMANDS).map((c) => c.load()))) register(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  process.stderr.write(`runset: ${(err as Error).message}\n`);
  process.exit(2);
}
