/**
 * The `runset` program and its commands' modules, apart from main.ts (which
 * parses process.argv on import) so that the CLI reference
 * (src/docs/cli-reference.ts) builds the very same program without running it.
 */
import { Command } from 'commander';
import { VERSION } from '../core/version.js';

export type Register = (program: Command) => void;

/**
 * Each command's module, loaded only when that command is asked for: a CI
 * step running `trigger` (or `trigger --help`) never loads the server, the
 * store drivers or the dashboard. With no known command (`--help`, a typo),
 * every command module loads: each keeps its heavy imports inside its action.
 */
export const COMMANDS: ReadonlyArray<{ names: readonly string[]; load: () => Promise<Register> }> = [
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

/** The program with no command registered yet. */
export function newProgram(): Command {
  return new Command('runset')
    .description('Run end-to-end tests on demand for CI pipelines.')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride();
}

/** The program with every command registered, as `runset --help` sees it. */
export async function fullProgram(): Promise<Command> {
  const program = newProgram();
  for (const register of await Promise.all(COMMANDS.map((c) => c.load()))) register(program);
  return program;
}
