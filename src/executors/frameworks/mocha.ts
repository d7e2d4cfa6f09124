/**
 * Mocha (9 or later): listed by `--dry-run` (every test reported, none run,
 * no hook run), run with the share's files and a `--grep` matching exactly
 * its cases' full titles. Both report through runset's own Mocha reporter
 * (./mocha-reporter.cts), since Mocha's `json` reporter loses where one
 * describe title ends and the next begins. Pending tests (`it.skip`,
 * `this.skip()`, a test without a body) are skipped; attempts are Mocha's
 * retries (`--retries`, `this.retries(n)`) plus one. Mocha runs one file
 * after another unless told otherwise, so an entry takes one worker by
 * default; more (`workers:`) run it with `--parallel --jobs`. A serial run
 * reports live through the same reporter (its cases begin and end as Mocha
 * runs them); a parallel one moves its members at the end.
 */
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { FrameworkTestSpec } from '../../core/types.js';
import { errorSummary } from '../playwright/error-text.js';
import { caseKey } from '../listed-case.js';
import { escapeRegExp, type FrameworkAdapter, type FrameworkReport, type ReportedCase } from './adapter.js';
import { relativeFile } from './jest-json.js';

const REPORTER = fileURLToPath(new URL('./mocha-reporter.cjs', import.meta.url));

function common(spec: FrameworkTestSpec, report: string): string[] {
  const args = [...spec.args, '--reporter', REPORTER, '--reporter-option', `output=${report}`];
  if (spec.timeoutOverride) args.push('--timeout', String(Math.round(spec.timeoutSeconds * 1000)));
  if (spec.retriesOverride) args.push('--retries', String(spec.retries));
  return args;
}

export const mochaAdapter = Object.freeze<FrameworkAdapter>({
  type: 'mocha',
  title: 'Mocha',
  packageName: 'mocha',
  retriesFlag: true,
  defaultWorkers: 1,
  listArgs: (spec, report) => [...common(spec, report), '--dry-run'],
  runArgs(spec, cases, plan) {
    const files = [...new Set(cases.map((c) => path.resolve(spec.dir, c.file)))];
    const names = [...new Set(cases.map((c) => escapeRegExp(c.titles.join(' '))))];
    const parallel = plan.workers > 1 ? ['--parallel', '--jobs', String(plan.workers)] : [];
    return [...common(spec, plan.report), ...parallel, '--grep', `^(?:${names.join('|')})$`, ...files];
  },
  read: readMochaReport,
  // Its reporter (already on the command line) reports live when the live file is named. In parallel mode Mocha hands a
  // file's events to reporters only once the file has finished in its worker, all at once: those members move at the end.
  liveReporter: (_version, plan) => (plan.workers > 1 ? undefined : { args: [], caseStarts: true, readyBeforeSetup: true }),
});

interface MochaCase {
  file: string;
  titles: string[];
  status: string;
  durationMs: number;
  attempts: number;
  errors: string[];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The report runset's Mocha reporter writes: `{ cases, hookErrors }`. */
export function readMochaReport(text: string, dir: string): FrameworkReport {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new Error(`the report is not JSON (${(error as Error).message})`);
  }
  if (!isObject(raw) || !Array.isArray(raw.cases) || !Array.isArray(raw.hookErrors)) throw new Error('the report has no "cases" and "hookErrors" lists');
  // A test reported twice (a failure after it passed: done() called twice, an async throw) keeps its last word.
  const byKey = new Map<string, ReportedCase>();
  for (const [i, item] of (raw.cases as unknown[]).entries()) {
    if (!isObject(item) || typeof item.file !== 'string' || !Array.isArray(item.titles) || typeof item.status !== 'string' || !Array.isArray(item.errors)) {
      throw new Error(`cases[${i}] is not a test (file, titles, status, errors)`);
    }
    const c = caseOf(item as unknown as MochaCase, dir);
    byKey.set(caseKey(c), c);
  }
  const fileErrors = new Map<string, string>();
  for (const item of raw.hookErrors as unknown[]) {
    if (!isObject(item) || typeof item.error !== 'string') continue;
    const file = typeof item.file === 'string' && item.file !== '' ? relativeFile(dir, item.file) : '';
    const said = `${typeof item.title === 'string' ? `${item.title}: ` : ''}${item.error}`;
    if (!fileErrors.has(file)) fileErrors.set(file, said);
  }
  return { cases: [...byKey.values()], fileErrors };
}

function caseOf(c: MochaCase, dir: string): ReportedCase {
  const status: ReportedCase['status'] = c.status === 'passed' ? 'passed' : c.status === 'skipped' ? 'skipped' : 'failed';
  const errors = c.errors.filter((e) => typeof e === 'string');
  const last = errors[errors.length - 1];
  return {
    file: relativeFile(dir, c.file),
    titles: c.titles.map(String),
    status,
    durationMs: Math.max(0, Math.round(typeof c.durationMs === 'number' ? c.durationMs : 0)),
    attempts: typeof c.attempts === 'number' ? c.attempts : status === 'skipped' ? 0 : 1,
    error: status === 'failed' ? errorSummary(last ?? 'failed (the report gives no message)', false) || 'failed' : null,
    output: errors.join('\n\n'),
  };
}
