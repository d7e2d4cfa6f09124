/**
 * Cucumber (@cucumber/cucumber, its `cucumber-js` program): listed by
 * `--dry-run` (every scenario that the suite's paths, tags and names select,
 * none run), run with the share's scenarios as `file:line` (the scenario's
 * line, or an outline's example row's) and a `--name` matching their names,
 * so that feature paths the suite's profile or `args` add (Cucumber merges
 * them with the command line's) run nothing more. Both write Cucumber's
 * message stream (`--format message:FILE`), read by ./cucumber-messages.ts.
 * Retries are Cucumber's `--retry`; Cucumber runs one scenario after another
 * unless told otherwise, so an entry takes one worker by default; more
 * (`workers:`) run it with `--parallel`. Cucumber has no step timeout on its
 * command line (setDefaultTimeout in the suite sets it). Scenarios begin
 * and end live, in parallel mode too, through runset's formatter
 * (./cucumber-reporter.ts).
 */
import { devNull } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { FrameworkCase, FrameworkTestSpec } from '../../core/types.js';
import { escapeRegExp, type FrameworkAdapter } from './adapter.js';
import { EXAMPLE_LABEL, readCucumberMessages } from './cucumber-messages.js';

const FORMATTER = fileURLToPath(new URL('./cucumber-reporter.js', import.meta.url));

function common(spec: FrameworkTestSpec, report: string): string[] {
  const args = [...spec.args, '--format', `message:${report}`];
  if (spec.retriesOverride) args.push('--retry', String(spec.retries));
  return args;
}

export const cucumberAdapter = Object.freeze<FrameworkAdapter>({
  type: 'cucumber',
  title: 'Cucumber',
  packageName: '@cucumber/cucumber',
  bin: 'cucumber-js',
  retriesFlag: true,
  defaultWorkers: 1,
  listArgs: (spec, report) => [...common(spec, report), '--dry-run'],
  runArgs(spec, cases, plan) {
    const parallel = plan.workers > 1 ? ['--parallel', String(plan.workers)] : [];
    return [...common(spec, plan.report), ...parallel, '--name', namePattern(cases), ...scenarioPaths(cases)];
  },
  read: readCucumberMessages,
  // A formatter class (Cucumber 11 and 12 construct one with the run's envelope stream), both parts quoted as Cucumber
  // asks of a path with colons; its output (none) goes to the null device, leaving the terminal's formatter as it was.
  liveReporter: () => ({ args: ['--format', `"${FORMATTER}":"${devNull}"`], caseStarts: true, readyBeforeSetup: true }),
});

/** `file:line:line…` per feature file: exactly the cases' scenarios and example rows. */
function scenarioPaths(cases: readonly FrameworkCase[]): string[] {
  const lines = new Map<string, Set<number>>();
  const whole = new Set<string>();
  for (const c of cases) {
    if (c.line === undefined) whole.add(c.file);
    else lines.set(c.file, (lines.get(c.file) ?? new Set()).add(c.line));
  }
  return [...new Set([...lines.keys(), ...whole])].map((file) => (whole.has(file) ? file : [file, ...[...(lines.get(file) ?? [])].sort((a, b) => a - b)].join(':')));
}

/**
 * The cases' scenario names (Cucumber matches `--name` against a scenario's
 * name, an outline row's with its values in), anchored. An outline row named
 * `#1.2` alone has the outline's own name, one of the titles before it.
 */
function namePattern(cases: readonly FrameworkCase[]): string {
  const names = new Set<string>();
  for (const { titles } of cases) {
    const last = titles[titles.length - 1] ?? '';
    const row = EXAMPLE_LABEL.exec(last);
    if (!row) names.add(last);
    else if (row[1] !== undefined) names.add(row[1]);
    else titles.slice(-3, -1).forEach((t) => names.add(t));
  }
  return `^(?:${[...names].map(escapeRegExp).join('|')})$`;
}
