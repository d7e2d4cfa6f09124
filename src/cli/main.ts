#!/usr/bin/env node
/**
 * The `runset` command line: parses arguments (commander) and calls into the
 * modules that do the work. Exit codes: 0 ok, 2 bad configuration or usage for
 * server commands; `trigger` documents its own.
 */
import { Command, CommanderError } from 'commander';
import { registerServeCommands } from './serve.js';
import { registerKeysCommand } from './keys.js';
import { registerDemoCommand } from './demo.js';
import { registerTriggerCommand } from './trigger.js';
import { registerWorkersCommand } from './workers.js';
import { registerCancelCommand } from './cancel.js';
import { VERSION } from './version.js';

const program = new Command('runset')
  .description('Run end-to-end tests on demand for CI pipelines.')
  .version(VERSION)
  .showHelpAfterError()
  .exitOverride();

registerServeCommands(program);
registerKeysCommand(program);
registerTriggerCommand(program);
registerWorkersCommand(program);
registerCancelCommand(program);
registerDemoCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  process.stderr.write(`runset: ${(err as Error).message}\n`);
  process.exit(2);
}
