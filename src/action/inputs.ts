/**
 * The GitHub Action's inputs, in one table: each row says how one input of
 * action.yml becomes `runset trigger` flags (or an environment variable of the
 * client). The action then runs the CLI's own parsing and flow
 * (src/cli/trigger.ts), so an input is checked exactly like the flag it maps to.
 *
 * The runner passes input `name` as the environment variable `INPUT_NAME`
 * (upper-cased, spaces as `_`, hyphens kept: `INPUT_API-KEY`), with
 * action.yml's defaults already applied, trimmed here as the runner's own
 * toolkit does. A test checks that this table and action.yml list the same
 * inputs.
 */

/** How one input's text becomes flags. */
type Mapping =
  /** The client's environment variable (the URL and key never go on a command line). */
  | { env: string }
  /** `FLAG value` when the input is not empty. */
  | { flag: string }
  /** One `FLAG item` per item: split at any of the separators, items trimmed, empty ones dropped. */
  | { flag: string; each: RegExp }
  /** One `FLAG line` per line: leading blanks trimmed, blank lines and `#` comments dropped (overrides keep trailing blanks: a value may end in one). */
  | { flag: string; lines: true }
  /** The switch `FLAG` alone when the input is exactly `when` (`true`/`false` inputs). */
  | { flag: string; when: string }
  /** `--rerun-failed last` when the input is `true` on a re-run attempt of the workflow run. */
  | { rerunOnRetry: true };

export interface ActionInput {
  name: string;
  map: Mapping;
  /** The step cannot run without it (action.yml says `required: true`; the runner only warns). */
  required?: true;
  /** It says what a new set holds: a rerun of failures takes that from the earlier set, so it is left out then. */
  newSetOnly?: true;
}

const COMMAS_OR_LINES = /[,\n]/;

export const ACTION_INPUTS: readonly ActionInput[] = Object.freeze([
  { name: 'url', map: { env: 'RUNSET_URL' }, required: true },
  { name: 'api-key', map: { env: 'RUNSET_API_KEY' }, required: true },
  { name: 'env', map: { flag: '--env' }, required: true },
  { name: 'overrides', map: { flag: '--override', lines: true }, newSetOnly: true },
  { name: 'interval', map: { flag: '--interval' } },
  { name: 'timeout', map: { flag: '--timeout' } },
  { name: 'junit', map: { flag: '--junit' } },
  { name: 'suite', map: { flag: '--suite' }, newSetOnly: true },
  { name: 'suite-name', map: { flag: '--suite-name' }, newSetOnly: true },
  { name: 'tags', map: { flag: '--tag', each: COMMAS_OR_LINES }, newSetOnly: true },
  { name: 'grep', map: { flag: '--grep' }, newSetOnly: true },
  { name: 'grep-invert', map: { flag: '--grep-invert' }, newSetOnly: true },
  // Lines only: a Playwright case's name may hold a comma.
  { name: 'tests', map: { flag: '--test', each: /\n/ }, newSetOnly: true },
  { name: 'projects', map: { flag: '--project', each: COMMAS_OR_LINES }, newSetOnly: true },
  { name: 'group', map: { flag: '--group' }, newSetOnly: true },
  { name: 'cancel-superseded', map: { flag: '--no-ci-group', when: 'false' }, newSetOnly: true },
  { name: 'rerun-failed', map: { rerunOnRetry: true } },
]);

/** The variable the runner sets for an input (the same rule as @actions/core's getInput). */
export function inputVariable(name: string): string {
  return `INPUT_${name.replace(/ /g, '_').toUpperCase()}`;
}

/** An input's value as the runner passed it, without surrounding blanks and CRs; '' when absent. */
export function readInput(env: Readonly<Record<string, string | undefined>>, name: string): string {
  return (env[inputVariable(name)] ?? '').replace(/\r/g, '').trim();
}

export interface TriggerInvocation {
  /** `runset trigger` arguments, `--wait` included: the action always follows its set to the end. */
  argv: string[];
  /** The client's variables from the inputs (RUNSET_URL, RUNSET_API_KEY). */
  env: Record<string, string>;
}

/** The required inputs left empty (each needs a value in the step's `with:`). */
export function missingInputs(env: Readonly<Record<string, string | undefined>>): string[] {
  return ACTION_INPUTS.filter((input) => input.required && readInput(env, input.name) === '').map((input) => input.name);
}

/** The inputs as `runset trigger` arguments and client variables. */
export function triggerInvocation(env: Readonly<Record<string, string | undefined>>): TriggerInvocation {
  const argv = ['--wait'];
  const clientEnv: Record<string, string> = {};
  const rerun = readInput(env, 'rerun-failed') === 'true' && Number(env.GITHUB_RUN_ATTEMPT ?? '1') > 1;
  for (const { name, map, newSetOnly } of ACTION_INPUTS) {
    const text = readInput(env, name);
    if (text === '' || (rerun && newSetOnly)) continue;
    if ('env' in map) clientEnv[map.env] = text;
    else if ('rerunOnRetry' in map) {
      if (rerun) argv.push('--rerun-failed', 'last');
    } else if ('when' in map) {
      if (text === map.when) argv.push(map.flag);
    }
    else if ('lines' in map) {
      const raw = (env[inputVariable(name)] ?? '').replace(/\r/g, '');
      for (const line of raw.split('\n').map((l) => l.trimStart())) if (line !== '' && !line.startsWith('#')) argv.push(map.flag, line);
    } else if ('each' in map) {
      for (const item of text.split(map.each).map((i) => i.trim())) if (item !== '') argv.push(map.flag, item);
    } else argv.push(map.flag, text);
  }
  return { argv, env: clientEnv };
}
