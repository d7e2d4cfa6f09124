/**
 * Jest: listed by a run that matches no test name (every case reported
 * `pending`, none run; Jest itself has no listing of cases), run with
 * `--json --outputFile`, the files given by path. Jest counts executions
 * itself (`invocations`); `jest.retryTimes` in the suite sets retries: its
 * command line has no flag for them. Jest 29 and later report live
 * (./jest-reporter.ts), each case's start from 29.6 (onTestCaseStart).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FrameworkTestSpec } from '../../core/types.js';
import { majorMinor, type FrameworkAdapter } from './adapter.js';
import { readJestJson } from './jest-json.js';
import { fullNamePattern, NO_NAME } from './vitest.js';

const REPORTER = fileURLToPath(new URL('./jest-reporter.js', import.meta.url));

function common(spec: FrameworkTestSpec, report: string): string[] {
  const args = [...spec.args, '--ci', '--json', `--outputFile=${report}`];
  if (spec.timeoutOverride) args.push(`--testTimeout=${Math.round(spec.timeoutSeconds * 1000)}`);
  return args;
}

export const jestAdapter = Object.freeze<FrameworkAdapter>({
  type: 'jest',
  title: 'Jest',
  packageName: 'jest',
  retriesFlag: false,
  listArgs: (spec, report) => [...common(spec, report), `--testNamePattern=${NO_NAME}`, '--passWithNoTests'],
  runArgs(spec, cases, plan) {
    const files = [...new Set(cases.map((c) => path.resolve(spec.dir, c.file)))];
    return [...common(spec, plan.report), `--maxWorkers=${plan.workers}`, `--testNamePattern=${fullNamePattern(cases)}`, '--runTestsByPath', ...files];
  },
  read: (text, dir) => readJestJson(text, dir, (a, status) => (status === 'skipped' ? 0 : Math.max(1, a.invocations ?? 1))),
  liveReporter(version) {
    // Jest 29 loads an ES module reporter (requireOrImportModule; older ones are not tried); `default` keeps its own terminal output for failures runset quotes.
    const [major, minor] = majorMinor(version);
    if (major < 29) return undefined;
    return { args: ['--reporters=default', `--reporters=${REPORTER}`], caseStarts: major > 29 || (major === 29 && minor >= 6), readyBeforeSetup: false };
  },
});
