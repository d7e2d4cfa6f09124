/**
 * Jest: listed by a run that matches no test name (every case reported
 * `pending`, none run; Jest itself has no listing of cases), run with
 * `--json --outputFile`, the files given by path. Jest counts executions
 * itself (`invocations`); `jest.retryTimes` in the suite sets retries: its
 * command line has no flag for them.
 */
import path from 'node:path';
import type { FrameworkTestSpec } from '../../core/types.js';
import type { FrameworkAdapter } from './adapter.js';
import { readJestJson } from './jest-json.js';
import { fullNamePattern, NO_NAME } from './vitest.js';

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
});
