#!/usr/bin/env node
/**
 * The `runset` command line: parses arguments (commander) and calls into the
 * modules that do the work. Exit codes: 0 ok, 2 bad configuration or usage for
 * server commands; `trigger` documents its own.
 */
import { CommanderError } from 'commander';
import { COMMANDS, newProgram } from './commands.js';

const program = newProgram();

// The program has no option that takes a value, so the first word is the command.
const args = process.argv.slice(2);
const asked = args.find((arg) => !arg.startsWith('-'));
const wanted = COMMANDS.filter((c) => asked !== undefined && c.names.includes(asked));
// `runset --version` alone needs no command; any other call without a known command (`--help`, a typo) lists them all.
const versionOnly = asked === undefined && args.length > 0 && args.every((arg) => arg === '--version' || arg === '-V');
const loading = versionOnly ? [] : wanted.length > 0 ? wanted : COMMANDS;
for (const register of await Promise.all(loading.map((c) => c.load()))) register(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  process.stderr.write(`runset: ${(err as Error).message}\n`);
  process.exit(2);
}
