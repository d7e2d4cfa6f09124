/**
 * Vitest: listed by a run that matches no test name (`--testNamePattern`
 * matching nothing: every case is reported skipped, none runs; `vitest list`
 * leaves out skipped cases), run with its `json` reporter. A case that passed
 * after failing keeps each failed attempt's message, so its attempts are
 * those plus one. Vitest 3 and later report live (./vitest-reporter.ts).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FrameworkTestSpec } from '../../core/types.js';
import { escapeRegExp, majorMinor, type FrameworkAdapter } from './adapter.js';
import { readJestJson } from './jest-json.js';

const REPORTER = fileURLToPath(new URL('./vitest-reporter.js', import.meta.url));

/** A pattern no name matches. */
export const NO_NAME = '(?!)';

/** The flags both listing and runs take: the entry's own args, then the report. */
function common(spec: FrameworkTestSpec, report: string): string[] {
  const args = ['run', ...spec.args, '--reporter=json', `--outputFile=${report}`];
  if (spec.timeoutOverride) args.push(`--testTimeout=${Math.round(spec.timeoutSeconds * 1000)}`);
  if (spec.retriesOverride) args.push(`--retry=${spec.retries}`);
  return args;
}

export const vitestAdapter = Object.freeze<FrameworkAdapter>({
  type: 'vitest',
  title: 'Vitest',
  packageName: 'vitest',
  retriesFlag: true,
  listArgs: (spec, report) => [...common(spec, report), `--testNamePattern=${NO_NAME}`, '--passWithNoTests'],
  runArgs(spec, cases, plan) {
    const files = [...new Set(cases.map((c) => path.resolve(spec.dir, c.file)))];
    return [...common(spec, plan.report), `--maxWorkers=${plan.workers}`, `--testNamePattern=${fullNamePattern(cases)}`, '--passWithNoTests', ...files];
  },
  read: (text, dir) =>
    readJestJson(text, dir, (a, status) => {
      const failures = a.failureMessages?.length ?? 0;
      return status === 'skipped' ? 0 : status === 'passed' ? failures + 1 : Math.max(1, failures);
    }),
  // onTestCaseReady and onTestCaseResult came with Vitest 3.0.
  liveReporter: (version) => (majorMinor(version)[0] >= 3 ? { args: [`--reporter=${REPORTER}`], caseStarts: true, readyBeforeSetup: true } : undefined),
});

/** Exactly the cases' full names (titles joined by a space), as Vitest and Jest match --testNamePattern. */
export function fullNamePattern(cases: ReadonlyArray<{ titles: readonly string[] }>): string {
  const names = [...new Set(cases.map((c) => escapeRegExp(c.titles.join(' '))))];
  return `^(?:${names.join('|')})$`;
}
