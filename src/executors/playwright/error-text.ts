/**
 * Playwright's own words when it fails outside a test (a config error, a
 * globalSetup that throws, a webServer that does not start, a crash): the
 * first lines of its error — what a person reads first to fix the suite —
 * without stack frames, code frames or terminal colours. Used for a member's
 * `error` when its batch ended before it ran, and for listing failures.
 */
import { stripAnsi } from './reporter.js';

const SUMMARY_LINES = 6;

/** Stack frames (`at x (file:1:2)`) and code frames (`> 3 |  throw …`, `    |  ^`): noise in a one-line error. */
const NOISE = /^\s*(at\s|>?\s*\d+\s*\||\|\s*\^|\|\s*$)/;
/** Where Playwright's message begins when its output has other lines before it (progress, banners). */
const ERROR_START = /(^|\s)(Error|error|Error:|TypeError|SyntaxError|ReferenceError|Cannot|cannot|Failed|failed|Timed out|timed out)\b/;

/**
 * The first lines of the error in `text`, or '' when it holds nothing but noise.
 * `printed`: `text` is what a process printed, where the error may follow other
 * lines (progress, banners), so it starts at the first line that looks like one;
 * otherwise `text` is an error message already, read from its start.
 */
export function errorSummary(text: string, printed = true): string {
  const lines = stripAnsi(text)
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '' && !NOISE.test(line));
  const start = printed ? lines.findIndex((line) => ERROR_START.test(line)) : 0;
  return lines.slice(Math.max(0, start), Math.max(0, start) + SUMMARY_LINES).join('\n').trim();
}
