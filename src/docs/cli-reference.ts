/**
 * docs/reference/cli.md: every command of `runset`, its arguments and options,
 * rendered from the commander program main.ts runs (src/cli/commands.ts builds
 * it with every command registered; no action runs).
 */
import type { Argument, Command, Option } from 'commander';
import { fullProgram } from '../cli/commands.js';
import { code, generatedHeader, table } from './markdown.js';

/** `serve`, `keys create`: a command's words below the program. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Every command under `program`, depth first in the order they were registered. */
export function allCommands(program: Command): Command[] {
  return program.commands.flatMap((c) => [c, ...allCommands(c)]);
}

function argumentText(argument: Argument): string {
  const name = `${argument.name()}${argument.variadic ? '...' : ''}`;
  return argument.required ? `<${name}>` : `[${name}]`;
}

function defaultText(value: unknown, description: string | undefined): string {
  if (description !== undefined) return description;
  if (value === undefined) return '';
  return code(typeof value === 'string' ? value : JSON.stringify(value));
}

function optionRow(option: Option): string[] {
  const choices = option.argChoices ? ` (one of ${option.argChoices.map(code).join(', ')})` : '';
  // A --no-x option's default true is commander's own bookkeeping, not a value anyone sets.
  const shownDefault: unknown = option.negate && option.defaultValue === true ? undefined : option.defaultValue;
  return [code(option.flags), `${option.description}${choices}`, defaultText(shownDefault, option.defaultValueDescription), option.envVar ? code(option.envVar) : ''];
}

function renderCommand(command: Command, out: string[]): void {
  const path = commandPath(command);
  const args = command.registeredArguments.map(argumentText).join(' ');
  out.push(`## ${code(`runset ${path}${args ? ` ${args}` : ''}`)}`, '');
  const aliases = command.aliases();
  if (aliases.length > 0) out.push(`Also: ${aliases.map((a) => code(a)).join(', ')}.`, '');
  out.push(command.description(), '');
  if (command.registeredArguments.length > 0) {
    const rows = command.registeredArguments.map((a) => [code(argumentText(a)), a.description, defaultText(a.defaultValue, a.defaultValueDescription)]);
    out.push(table(['argument', 'description', 'default'], rows), '');
  }
  const options = command.options.filter((o) => !o.hidden);
  if (options.length > 0) out.push(table(['option', 'description', 'default', 'env'], options.map(optionRow)), '');
  if (command.commands.length > 0) out.push(`Commands: ${command.commands.map((c) => code(commandPath(c))).join(', ')}.`, '');
}

export async function renderCliReference(): Promise<string> {
  const program = await fullProgram();
  const out: string[] = [
    generatedHeader('the commander program of src/cli/commands.ts'),
    '',
    '# runset CLI reference',
    '',
    `${program.description()} Every command also takes ${code('-h, --help')}; ${code('runset --version')} prints the version.`,
    '',
    table(['command', 'what it does'], allCommands(program).map((c) => [code(commandPath(c)), c.description()])),
    '',
  ];
  for (const command of allCommands(program)) renderCommand(command, out);
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}
