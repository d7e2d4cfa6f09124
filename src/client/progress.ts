/**
 * What `trigger` tells a human on stderr while it waits and when it ends.
 *
 * In a terminal, progress is one line rewritten in place (with a ticking
 * elapsed time); in a CI log, where `\r` would pile up, one line is printed per
 * change of status or counts, so the log stays short and readable.
 */
import { formatDuration } from '../core/duration.js';
import type { TextSink } from './redact.js';
import { countsOf, failedMembers, failedText, flakyMembers, oneLine, passedText, restartedMembers, setDurationMs, unfinishedMembers, type ReportInput } from './reports/model.js';
import { ranAgainText } from '../core/starts.js';
import { isQuarantined, type TestRunSetStatus } from './types.js';

const CLEAR_LINE = '\r\u001b[2K';
const MAX_LISTED = 50;

export function countsText(status: TestRunSetStatus): string {
  const c = status.progress.counts;
  return `${c.SUCCESS} passed, ${c.FAIL} failed, ${c.RUNNING} running, ${c.WAITING} waiting`;
}

export class ProgressReporter {
  readonly #sink: TextSink;
  readonly #started: number;
  #last: TestRunSetStatus | null = null;
  #lastKey = '';
  #ticker: NodeJS.Timeout | null = null;
  #drawn = false;

  constructor(sink: TextSink, started: number) {
    this.#sink = sink;
    this.#started = started;
  }

  get tty(): boolean {
    return this.#sink.isTTY === true;
  }

  /** A new status from a poll. */
  update(status: TestRunSetStatus): void {
    this.#last = status;
    if (this.tty) {
      this.#draw();
      // The elapsed time keeps moving between polls, which can be 10 s apart.
      this.#ticker ??= setInterval(() => this.#draw(), 1000).unref();
      return;
    }
    const key = `${status.status} ${countsText(status)}`;
    if (key === this.#lastKey) return;
    this.#lastKey = key;
    this.#sink.write(`runset: ${this.#text(status)}\n`);
  }

  /** A line of its own (a retry notice, a warning), kept above the live line. */
  note(line: string): void {
    if (this.tty && this.#drawn) this.#sink.write(CLEAR_LINE);
    this.#sink.write(`runset: ${line}\n`);
    if (this.tty && this.#last) this.#draw();
  }

  /** Ends live output; the summary follows on clean lines. */
  stop(): void {
    if (this.#ticker) clearInterval(this.#ticker);
    this.#ticker = null;
    if (this.tty && this.#drawn) this.#sink.write(CLEAR_LINE);
    this.#drawn = false;
  }

  #draw(): void {
    if (!this.#last) return;
    this.#sink.write(`${CLEAR_LINE}runset: ${this.#text(this.#last)}`);
    this.#drawn = true;
  }

  #text(status: TestRunSetStatus): string {
    return `${oneLine(status.status, 40)} — ${countsText(status)} (${formatDuration(Date.now() - this.#started)})`;
  }
}

/** The end-of-run summary: status, counts, duration, then failed and flaky tests with their errors, and the tests started more than once. */
export function summaryLines(input: ReportInput): string[] {
  const counts = countsOf(input);
  const head = input.outcome === 'TIMEOUT' ? `timed out (last status ${input.status?.status ?? 'unknown'})` : input.outcome;
  const lines = [`runset: ${head} — env ${input.env}, test run set ${input.setId}`];
  const parts = [passedText(counts), failedText(counts)];
  if (counts.unfinished > 0) parts.push(`${counts.unfinished} not finished`);
  lines.push(`  ${counts.total} tests: ${parts.join(', ')} · took ${formatDuration(setDurationMs(input))}`);
  const members = input.members;
  if (!members) {
    if (counts.failed > 0) lines.push('  (this server does not list the members of a set: see the server for which tests failed)');
    return lines;
  }
  const failed = failedMembers(members);
  for (const run of failed.slice(0, MAX_LISTED)) {
    lines.push(`  ✗ ${run.name} [${run.type}]${isQuarantined(run) ? ' (quarantined)' : ''}: ${oneLine(run.error ?? 'failed', 300)}`);
  }
  if (failed.length > MAX_LISTED) lines.push(`  … and ${failed.length - MAX_LISTED} more failed`);
  for (const run of flakyMembers(members).slice(0, MAX_LISTED)) {
    lines.push(`  ⚠ ${run.name} [${run.type}]: flaky, passed after ${run.attempts} attempts`);
  }
  // Ran more than once because a start was lost: at-least-once, said rather than hidden; not flaky by itself.
  for (const run of restartedMembers(members).slice(0, MAX_LISTED)) {
    lines.push(`  ↻ ${run.name} [${run.type}]: ${ranAgainText(run) ?? `started ${run.starts ?? 1} times`}`);
  }
  if (input.outcome === 'TIMEOUT') {
    for (const run of unfinishedMembers(members).slice(0, MAX_LISTED)) lines.push(`  … ${run.name} [${run.type}]: ${oneLine(run.status, 40)}`);
  }
  return lines;
}
