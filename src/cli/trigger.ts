/**
 * `runset trigger`: parses the command line and hands over to the trigger flow
 * in src/client/trigger.ts. Nothing else lives here.
 *
 * The URL and key come from the environment only (RUNSET_URL, RUNSET_API_KEY):
 * a key on the command line would end up in shell history and process lists.
 * Usage errors exit with 3, like every error that is not a test outcome, so CI
 * can tell "the tests failed" (1) from "the step is broken" (3).
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { DurationError, parseDuration } from '../core/duration.js';
import { EXIT_CODES, type TriggerDeps, type TriggerEnv, type TriggerIo } from '../client/trigger-context.js';
import type { TestSelection } from '../client/types.js';
import { VERSION } from '../core/version.js';
import { parseSuiteName } from './suite-name.js';

export interface TriggerCommandDeps extends TriggerDeps {
  env?: TriggerEnv;
  io?: TriggerIo;
  /** Receives the exit code of a run. Default: sets process.exitCode (so pending output is flushed). */
  onExit?: (code: number) => void;
  /** How usage errors and --help end. Default: exit the process, with 3 for errors and 0 for help. */
  onUsageExit?: (error: CommanderError) => void;
}

interface RawOptions {
  env: string;
  override?: Array<[string, string]>;
  label?: Array<[string, string]>;
  ciLabels: boolean;
  group?: string;
  ciGroup: boolean;
  wait?: boolean;
  interval: number;
  timeout: number;
  junit?: string;
  json?: boolean;
  cancelOnExit: boolean;
  suite?: string;
  suiteName?: string;
  tag?: string[];
  grep?: string;
  grepInvert?: string;
  test?: string[];
  project?: string[];
  rerunFailed?: string;
}

/** `--group NAME`: 1-256 characters, as the server takes it. */
function parseGroup(value: string): string {
  if (value.length < 1 || value.length > 256) throw new InvalidArgumentError(`a group of 1-256 characters, such as pr-42; got ${value.length} characters`);
  return value;
}

/** A repeatable flag's values, in the order given. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The create body's `select` from the selection flags; undefined when none was given (every test runs). */
export function selectionOf(raw: Pick<RawOptions, 'tag' | 'grep' | 'grepInvert' | 'test' | 'project'>): TestSelection | undefined {
  const select: TestSelection = {
    ...(raw.tag ? { tags: raw.tag } : {}),
    ...(raw.grep !== undefined ? { grep: raw.grep } : {}),
    ...(raw.grepInvert !== undefined ? { grepInvert: raw.grepInvert } : {}),
    ...(raw.test ? { names: raw.test } : {}),
    ...(raw.project ? { projects: raw.project } : {}),
  };
  return Object.keys(select).length > 0 ? select : undefined;
}

/** `K=V`, split at the first `=` so values may contain `=` (URLs with queries, base64). */
export function parseOverride(value: string, previous: Array<[string, string]> | undefined): Array<[string, string]> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('expected K=V (a variable name, "=", then the value)');
  return [...(previous ?? []), [value.slice(0, at), value.slice(at + 1)]];
}

/** `k=v`, split at the first `=`; the key's rules are checked by the trigger flow (client/ci-labels.ts), loaded only to run. */
function collectLabel(value: string, previous: Array<[string, string]> | undefined): Array<[string, string]> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('expected k=v (a label key, "=", then the value), such as branch=main');
  return [...(previous ?? []), [value.slice(0, at), value.slice(at + 1)]];
}

function parsePositiveDuration(value: string): number {
  try {
    const ms = parseDuration(value);
    if (ms <= 0) throw new InvalidArgumentError('must be longer than 0');
    return ms;
  } catch (error) {
    if (error instanceof DurationError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

const ENV_HELP = `
Environment:
  RUNSET_URL      base address of the runset API, ending in /api (required)
  RUNSET_API_KEY  API key, sent as a Bearer token (required; never printed)

Exit codes:
  0  SUCCESS (without --wait: the set was created)   1  FAIL
  2  timed out (--timeout)                           3  any other error

Without --wait, stdout holds only the id:  ID=$(runset trigger --env staging)
Durations: 250ms, 0.5s, 10s, 10m, 1h, or a plain number of seconds.`;

export function registerTriggerCommand(program: Command, deps: TriggerCommandDeps = {}): void {
  const command = program
    .command('trigger')
    .description('create a Test Run Set for an environment and, with --wait, wait for its result')
    .addOption(new Option('--env <name>', 'environment to run the tests of').env('RUNSET_ENV').makeOptionMandatory())
    .addOption(new Option('--override <K=V>', "replace a variable of the environment (repeatable), e.g. BASE_URL=https://pr-42.example.com").argParser(parseOverride))
    .addOption(new Option('--label <k=v>', 'a label of the set (repeatable), e.g. release=2026.11; shown and filterable in the dashboard').argParser(collectLabel))
    .option('--no-ci-labels', "do not send the CI's context (commit, branch, pr, pipeline, actor, repo) as labels")
    .addOption(new Option('--group <name>', "the set's concurrency group: it cancels the group's older unfinished sets of --env (\"superseded by <id>\"); default in GitHub Actions: repository/workflow@ref").env('RUNSET_GROUP').argParser(parseGroup))
    .option('--no-ci-group', 'in GitHub Actions without --group: no concurrency group (older sets of this workflow and ref run on)')
    .option('--wait', 'wait until the set is SUCCESS or FAIL, and exit accordingly')
    .addOption(new Option('--interval <duration>', 'time between status polls').env('RUNSET_INTERVAL').argParser(parsePositiveDuration).default(10_000, '10s'))
    .addOption(new Option('--timeout <duration>', 'give up after this long, counted from the create').env('RUNSET_TIMEOUT').argParser(parsePositiveDuration).default(600_000, '10m'))
    .addOption(new Option('--junit <file>', 'write a JUnit XML report (needs --wait)').env('RUNSET_JUNIT'))
    .option('--json', 'print the final status object as JSON on stdout instead of the id')
    .option('--no-cancel-on-exit', 'with --wait: on SIGINT/SIGTERM, leave the set running (default: cancel it, then exit 3)')
    .addOption(new Option('--suite <dir>', "run the suite in this folder (of a runset.config.yaml): packed, listed and uploaded first unless the server has it; the environment must allow suite uploads").env('RUNSET_SUITE'))
    .addOption(new Option('--suite-name <name>', 'run the version published under this name (`runset suites push DIR --name NAME`); with --suite, publish the uploaded one under it').env('RUNSET_SUITE_NAME').argParser(parseSuiteName))
    .addOption(new Option('--tag <tag>', 'run only tests with this tag (repeatable: any of them); a Playwright case\'s @tags count').argParser(collect))
    .option('--grep <regex>', "run only tests whose name matches this regular expression (a Playwright case's name is file › describe › title)")
    .option('--grep-invert <regex>', 'leave out tests whose name matches this regular expression')
    .addOption(new Option('--test <name>', 'run only the test of this exact name (repeatable)').argParser(collect))
    .addOption(new Option('--project <name>', 'run only the Playwright cases of this project (repeatable); leaves out http and command tests').argParser(collect))
    .option('--rerun-failed <id>', "instead of a new set, run again only the tests that ended FAIL (cancelled ones included) in set <id> (or \"last\": the newest ended set of --env with this CI run's pipeline label), with its environment, overrides, labels and selection")
    .addHelpText('after', ENV_HELP);

  command.exitOverride((error) => {
    if (deps.onUsageExit) deps.onUsageExit(error);
    else process.exit(error.exitCode === 0 ? 0 : EXIT_CODES.error);
  });

  command.action(async (raw: RawOptions) => {
    if (raw.junit && !raw.wait) command.error('error: --junit needs --wait (the report is written when the set ends)', { exitCode: EXIT_CODES.error });
    const conflicting = raw.rerunFailed === undefined ? undefined : rerunConflicts(raw);
    if (conflicting) command.error(`error: --rerun-failed runs the earlier set's overrides, labels, suite and selection again; it cannot be combined with ${conflicting}`, { exitCode: EXIT_CODES.error });
    const io = deps.io ?? { stdout: process.stdout, stderr: process.stderr };
    const env = deps.env ?? process.env;
    let suite = raw.suiteName;
    if (raw.suite !== undefined) {
      // Loaded only with --suite: packing reaches the config parser and Playwright's locator.
      const { pushAndSay } = await import('./suites.js');
      const pushed = await pushAndSay({ dir: raw.suite, name: raw.suiteName }, env, io, deps.fetch);
      if (pushed === null) {
        if (deps.onExit) deps.onExit(EXIT_CODES.error);
        else process.exitCode = EXIT_CODES.error;
        return;
      }
      // The id, not the name: the set runs exactly what was just pushed, whatever the name points at later.
      suite = pushed;
    }
    // Loaded only to run: `trigger --help` and usage errors never load the client.
    const { runTrigger } = await import('../client/trigger.js');
    const code = await runTrigger(
      {
        env: raw.env,
        overrides: Object.fromEntries(raw.override ?? []),
        labels: Object.fromEntries(raw.label ?? []),
        ciLabels: raw.ciLabels,
        group: raw.group,
        ciGroup: raw.ciGroup,
        wait: raw.wait === true,
        intervalMs: raw.interval,
        timeoutMs: raw.timeout,
        junit: raw.junit,
        json: raw.json === true,
        cancelOnExit: raw.cancelOnExit,
        suite,
        select: selectionOf(raw),
        rerunFailed: raw.rerunFailed,
      },
      env,
      io,
      { fetch: deps.fetch, userAgent: deps.userAgent ?? `runset-cli/${VERSION}`, signals: deps.signals, onCreated: deps.onCreated },
    );
    if (deps.onExit) deps.onExit(code);
    else process.exitCode = code;
  });
}

/** The flags given that say what a new set holds, which a rerun takes from the earlier set instead (undefined: none). */
function rerunConflicts(raw: RawOptions): string | undefined {
  const given: Array<[string, boolean]> = [
    ['--override', (raw.override ?? []).length > 0],
    ['--label', (raw.label ?? []).length > 0],
    ['--group', raw.group !== undefined],
    ['--suite', raw.suite !== undefined],
    ['--suite-name', raw.suiteName !== undefined],
    ['--tag/--grep/--grep-invert/--test/--project', selectionOf(raw) !== undefined],
  ];
  const names = given.filter(([, on]) => on).map(([name]) => name);
  return names.length > 0 ? names.join(', ') : undefined;
}

/**
 * Runs `runset trigger <argv…>` in-process and resolves with its exit code: for
 * tests, and for embedding. Output goes to `io`, never to the process streams.
 */
export async function runTriggerCommand(argv: readonly string[], env: TriggerEnv, io: TriggerIo, deps: TriggerDeps = {}): Promise<number> {
  const program = new Command('runset')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) });
  let code: number = EXIT_CODES.error;
  registerTriggerCommand(program, {
    ...deps,
    env,
    io,
    onExit: (exitCode) => {
      code = exitCode;
    },
    onUsageExit: (error) => {
      throw error;
    },
  });
  try {
    await program.parseAsync(['trigger', ...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT_CODES.error;
    throw error;
  }
  return code;
}
