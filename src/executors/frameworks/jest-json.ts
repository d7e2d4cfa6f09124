/**
 * The JSON report of Jest (`--json --outputFile`), which Vitest's `json`
 * reporter writes too: one entry per test file, each with its assertion
 * results (ancestorTitles, title, status, duration, failureMessages). The
 * frameworks differ only in how they count attempts, so each adapter gives
 * that rule.
 */
import path from 'node:path';
import { errorSummary } from '../playwright/error-text.js';
import type { FrameworkReport, ReportedCase } from './adapter.js';
import type { ReportedAttachment } from './attachments.js';

export interface JestAssertion {
  ancestorTitles: string[];
  title: string;
  status: string;
  duration?: number | null;
  failureMessages?: string[];
  /** Jest: executions, retries included. */
  invocations?: number;
  /** Vitest: the case's tags. */
  tags?: string[];
  /** Vitest, from runset's live reporter only: the files the case attached. */
  attachments?: ReportedAttachment[];
}

interface JestFileResult {
  name: string;
  status?: string;
  message?: string;
  assertionResults: JestAssertion[];
}

const SKIPPED = new Set(['pending', 'skipped', 'todo', 'disabled']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The report in `text`; `attemptsOf` counts a case's executions from its entry. */
export function readJestJson(text: string, dir: string, attemptsOf: (a: JestAssertion, status: ReportedCase['status']) => number): FrameworkReport {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new Error(`the report is not JSON (${(error as Error).message})`);
  }
  if (!isObject(raw) || !Array.isArray(raw.testResults)) throw new Error('the report has no "testResults" list');
  const cases: ReportedCase[] = [];
  const fileErrors = new Map<string, string>();
  for (const [i, item] of (raw.testResults as unknown[]).entries()) {
    if (!isObject(item) || typeof item.name !== 'string' || !Array.isArray(item.assertionResults)) throw new Error(`testResults[${i}] is not a file's results (name, assertionResults)`);
    const result = item as unknown as JestFileResult;
    const file = relativeFile(dir, result.name);
    if (result.status === 'failed' && typeof result.message === 'string' && result.message.trim() !== '') fileErrors.set(file, result.message);
    for (const [j, a] of result.assertionResults.entries()) {
      if (!isObject(a) || typeof a.title !== 'string' || !Array.isArray(a.ancestorTitles) || typeof a.status !== 'string') {
        throw new Error(`testResults[${i}].assertionResults[${j}] is not a case (ancestorTitles, title, status)`);
      }
      cases.push(caseOf(file, a, attemptsOf));
    }
  }
  return { cases, fileErrors };
}

function caseOf(file: string, a: JestAssertion, attemptsOf: (a: JestAssertion, status: ReportedCase['status']) => number): ReportedCase {
  const status: ReportedCase['status'] = a.status === 'passed' ? 'passed' : SKIPPED.has(a.status) ? 'skipped' : 'failed';
  const messages = (a.failureMessages ?? []).filter((m) => typeof m === 'string');
  const last = messages[messages.length - 1];
  const reported: ReportedCase = {
    file,
    titles: [...a.ancestorTitles.map(String), a.title],
    status,
    durationMs: Math.max(0, Math.round(typeof a.duration === 'number' ? a.duration : 0)),
    attempts: attemptsOf(a, status),
    error: status === 'failed' ? errorSummary(last ?? `${a.status} (the report gives no message)`, false) || a.status : null,
    output: messages.join('\n\n'),
  };
  if (Array.isArray(a.tags) && a.tags.length > 0) reported.tags = a.tags.map(String);
  const attachments = (Array.isArray(a.attachments) ? (a.attachments as unknown[]) : []).filter(
    (x): x is ReportedAttachment => isObject(x) && typeof x.name === 'string' && typeof x.contentType === 'string' && (typeof x.path === 'string' || typeof x.body === 'string'),
  );
  if (attachments.length > 0) reported.attachments = attachments;
  return reported;
}

/** A report's file name (absolute) relative to the entry's folder, with / separators. */
export function relativeFile(dir: string, name: string): string {
  const rel = path.isAbsolute(name) ? path.relative(dir, name) : name;
  return rel.split(path.sep).join('/');
}
