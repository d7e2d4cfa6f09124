/**
 * What every report is made from — the outcome of one trigger, the set's last
 * status and its members when the server lists them — and the text clean-up the
 * reports share (CI viewers choke on terminal colour codes and on characters XML
 * forbids).
 */
import { isFlaky, isQuarantined, isSkipped, type TestRun, type TestRunSetStatus } from '../types.js';
import { wasRestarted } from '../../core/starts.js';

export type Outcome = 'SUCCESS' | 'FAIL' | 'TIMEOUT';

export interface ReportInput {
  env: string;
  setId: string;
  outcome: Outcome;
  /** Last status read; null if none could be read. */
  status: TestRunSetStatus | null;
  /** Null when the server has no members endpoint (or it could not be read). */
  members: TestRun[] | null;
  /** From the create to the end of the wait, measured by the client. */
  elapsedMs: number;
  /** The uploaded suite version the set ran (`trigger --suite`/`--suite-name`); absent: the server's own tests. */
  suite?: { id: string; name: string | null; commit: string | null };
  /** The set's dashboard page (./links.ts), linked from the step summary. */
  dashboardUrl?: string;
  /**
   * How many member ends failed the set, as the server counted them (its
   * details' `failing`); absent when the server does not say (an older one),
   * or the set did not end.
   */
  failing?: number;
}

// Matching escape sequences is the point here, so control characters are expected.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g;
// XML 1.0 allows tab, LF, CR and everything from U+0020 except surrogates, U+FFFE and U+FFFF.
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Removes colour codes and characters that XML (and most viewers) cannot carry. */
export function cleanText(text: string): string {
  return text.replace(ANSI, '').replace(NOT_XML, '\uFFFD');
}

/** The first line, cleaned and cut: for attributes, annotations and table cells. */
export function oneLine(text: string, max = 200): string {
  const first = cleanText(text).split(/\r?\n/).find((line) => line.trim() !== '') ?? '';
  const trimmed = first.trim();
  return trimmed.length > max ? `${trimmed.slice(0, max - 1)}…` : trimmed;
}

/** The end of a member's output: where test runners print the reason. */
export function outputTail(output: string | null, maxLines = 40, maxChars = 4000): string {
  if (!output) return '';
  const lines = cleanText(output).replace(/\s+$/, '').split(/\r?\n/);
  let tail = lines.slice(-maxLines).join('\n');
  if (tail.length > maxChars) tail = `…${tail.slice(-maxChars)}`;
  return tail;
}

export function failedMembers(members: readonly TestRun[]): TestRun[] {
  return members.filter((run) => run.status === 'FAIL');
}

export function flakyMembers(members: readonly TestRun[]): TestRun[] {
  return members.filter((run) => isFlaky(run));
}

/** Members started more than once because a start of theirs was lost (src/core/starts.ts), whatever their end. */
export function restartedMembers(members: readonly TestRun[]): TestRun[] {
  return members.filter((run) => wasRestarted(run));
}

/** Members still WAITING, RUNNING or in a state this client does not know. */
export function unfinishedMembers(members: readonly TestRun[]): TestRun[] {
  return members.filter((run) => run.status !== 'SUCCESS' && run.status !== 'FAIL');
}

function spanMs(from: string | null, to: string | null): number | null {
  if (!from || !to) return null;
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) && ms >= 0 ? ms : null;
}

/** The server's measure when it has one (first start to last end), else the client's. */
export function setDurationMs(input: ReportInput): number {
  return spanMs(input.status?.startedAt ?? null, input.status?.endedAt ?? null) ?? input.elapsedMs;
}

export function memberDurationMs(run: TestRun): number {
  return run.durationMs ?? spanMs(run.startedAt, run.endedAt) ?? 0;
}

/** Members Playwright skipped: SUCCESS by the seed's states, but nothing of them ran. */
export function skippedMembers(members: readonly TestRun[]): TestRun[] {
  return members.filter((run) => isSkipped(run));
}

/**
 * A set's counts as the reports say them; `skipped` is a part of `passed`,
 * `quarantinedFailed` a part of `failed`, `flaky` a part of `passed` (all 0
 * when members are not listed).
 */
export interface ReportCounts {
  total: number;
  passed: number;
  skipped: number;
  flaky: number;
  failed: number;
  quarantinedFailed: number;
  unfinished: number;
}

export function countsOf(input: ReportInput): ReportCounts {
  const c = input.status?.progress.counts;
  if (input.members) {
    const failed = failedMembers(input.members).length;
    const passed = input.members.filter((run) => run.status === 'SUCCESS').length;
    const skipped = skippedMembers(input.members).length;
    const flaky = flakyMembers(input.members).length;
    const quarantinedFailed = failedMembers(input.members).filter(isQuarantined).length;
    return { total: input.members.length, passed, skipped, flaky, failed, quarantinedFailed, unfinished: input.members.length - passed - failed };
  }
  const none = { skipped: 0, flaky: 0, quarantinedFailed: 0 };
  if (!c) return { total: 0, passed: 0, failed: 0, unfinished: 0, ...none };
  return { total: c.WAITING + c.RUNNING + c.SUCCESS + c.FAIL, passed: c.SUCCESS, failed: c.FAIL, unfinished: c.WAITING + c.RUNNING, ...none };
}

/** "2 failed", or "2 failed (1 quarantined)": a quarantined failure did not fail the set. */
export function failedText(counts: Pick<ReportCounts, 'failed' | 'quarantinedFailed'>): string {
  return `${counts.failed} failed${counts.quarantinedFailed > 0 ? ` (${counts.quarantinedFailed} quarantined)` : ''}`;
}

/** "3 passed", or "3 passed (1 skipped)": a skipped test must not read as one that ran and passed. */
export function passedText(counts: Pick<ReportCounts, 'passed' | 'skipped'>): string {
  return `${counts.passed} passed${counts.skipped > 0 ? ` (${counts.skipped} skipped)` : ''}`;
}

const tests = (n: number) => `${n} test${n === 1 ? '' : 's'}`;

/**
 * The verdict in one line, naming what the status rule did beside the seed's:
 * "SUCCESS: 3 of 5 tests passed — 2 quarantined tests failed"; a FAIL that no
 * failure explains came from failOnFlaky. The rule is the server's: a SUCCESS
 * had no end that failed it, so its failures were all quarantined, and a FAIL
 * reads the ends that failed it (`failing`). Only a server too old to say
 * leaves the members' own flags to tell.
 */
export function verdictText(input: ReportInput): string {
  const counts = countsOf(input);
  if (input.outcome === 'SUCCESS') {
    const quarantined = counts.failed > 0 ? ` — ${tests(counts.failed)} quarantined failed` : '';
    return `SUCCESS: ${counts.passed} of ${tests(counts.total)} passed${counts.skipped > 0 ? ` (${counts.skipped} skipped)` : ''}${quarantined}`;
  }
  const failed = counts.failed - counts.quarantinedFailed;
  const quarantined = counts.quarantinedFailed > 0 ? ` (and ${counts.quarantinedFailed} quarantined)` : '';
  // No failure of its own failed it: passes after a retry did (failOnFlaky), as many as the server counted.
  const onFlaky = failed === 0 ? (input.failing ?? counts.flaky) : 0;
  if (onFlaky > 0) return `FAIL: ${tests(onFlaky)} passed only after a retry, and this environment fails a set on flaky tests (failOnFlaky)${quarantined}`;
  return `FAIL: ${failed > 0 ? failed : counts.failed} of ${tests(counts.total)} failed${failed > 0 ? quarantined : ''}`;
}
