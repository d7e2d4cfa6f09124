/**
 * The Mocha reporter runset passes with `--reporter <this file>`, for listing
 * (`--dry-run`) and runs alike. Mocha's own `json` reporter gives a test's
 * full title only (its describe titles and its own joined by spaces), which
 * cannot be split back into describes; this one writes each test's title path
 * (`titlePath()`), file, outcome, duration, retries (`currentRetry()`) and
 * every failed attempt's message, as JSON, into the file named by
 * `--reporter-option output=FILE` when the run ends. It uses only Mocha's
 * runner events and the test fields Mocha also hands reporters in parallel
 * mode (serialized), so it works in both.
 *
 * A hook that fails keeps the tests under it from running: each of them that
 * has no result yet fails with the hook's words (its suite's tests are known
 * in a serial run; in parallel mode, or for an error outside any test, the
 * failure is written as its file's error, which the file's tests without a
 * result then carry).
 *
 * Live (./live.ts): when the variable REPORTER_FILE_ENV names a file (the
 * adapter's liveReporter, serial runs), each test's first attempt appends a
 * `caseBegin` line to it and each recorded outcome a `results` line holding
 * that one case in this report's own shape, so runset reads a live end with
 * the reader of the report itself. Mocha records a test once, after its
 * retries (`retry` events are kept, not recorded), so a live end is final.
 *
 * A CommonJS module (.cts → .cjs): Mocha loads reporters with require().
 */
import { openSync, writeFileSync, writeSync } from 'node:fs';

/** The live channel's file (../playwright/reporter.ts, ./live-writer.ts); named here too, since this file imports nothing of runset's. */
const REPORTER_FILE_ENV = 'RUNSET_REPORTER_FILE';

interface MochaRunnable {
  title: string;
  file?: string;
  type?: string;
  duration?: number;
  titlePath(): string[];
  currentRetry?(): number;
  /** Its suite: in a serial run with its tests and child suites. */
  parent?: MochaSuite;
}

interface MochaSuite {
  tests?: MochaRunnable[];
  suites?: MochaSuite[];
}

interface MochaRunner {
  on(event: string, listener: (runnable: MochaRunnable, error?: unknown) => void): void;
  once(event: string, listener: () => void): void;
}

/** Appends one JSON line per event, synchronously (every event arrives, in order, even when Mocha exits right after), as ./live-writer.ts does. */
function liveSender(): ((event: unknown) => void) | undefined {
  const file = process.env[REPORTER_FILE_ENV];
  if (!file) return undefined;
  const fd = openSync(file, 'a');
  return (event) => {
    const line = Buffer.from(JSON.stringify(event) + '\n');
    for (let offset = 0; offset < line.length; ) offset += writeSync(fd, line, offset);
  };
}

interface MochaCase {
  file: string;
  titles: string[];
  status: 'passed' | 'failed' | 'skipped';
  durationMs: number;
  attempts: number;
  /** Every failed attempt's message, the last one last. */
  errors: string[];
}

interface MochaHookError {
  file: string;
  title: string;
  error: string;
}

function messageOf(error: unknown): string {
  if (error instanceof Error || (typeof error === 'object' && error !== null && 'message' in error)) {
    const e = error as { stack?: unknown; message?: unknown };
    const stack = typeof e.stack === 'string' ? e.stack : '';
    const message = typeof e.message === 'string' ? e.message : String(e.message);
    // A stack begins with the message; an error without one gets both.
    return stack.includes(message) ? stack : `${message}\n${stack}`.trim();
  }
  return String(error);
}

function RunsetMochaReporter(runner: MochaRunner, options: { reporterOptions?: Record<string, unknown>; reporterOption?: Record<string, unknown> }): void {
  const output = (options.reporterOptions ?? options.reporterOption ?? {}).output;
  if (typeof output !== 'string' || output === '') throw new Error("runset's Mocha reporter needs --reporter-option output=FILE: the file it writes its report to");
  const cases: MochaCase[] = [];
  const hookErrors: MochaHookError[] = [];
  const retried = new Map<string, string[]>();
  const recorded = new Set<string>();
  const keyOf = (test: MochaRunnable) => JSON.stringify([test.file ?? '', ...test.titlePath()]);
  const live = liveSender();
  live?.({ type: 'ready' }); // Mocha constructs its reporter before its global setup and root hooks (../live-tracker.ts: the start guard)
  const record = (test: MochaRunnable, status: MochaCase['status'], error?: unknown, said = error === undefined ? undefined : messageOf(error)) => {
    recorded.add(keyOf(test));
    const errors = [...(retried.get(keyOf(test)) ?? [])];
    if (said !== undefined) errors.push(said);
    const retries = typeof test.currentRetry === 'function' ? test.currentRetry() : 0;
    const c: MochaCase = {
      file: test.file ?? '',
      titles: test.titlePath(),
      status,
      durationMs: typeof test.duration === 'number' ? test.duration : 0,
      attempts: status === 'skipped' ? 0 : retries + 1,
      errors,
    };
    cases.push(c);
    live?.({ type: 'results', report: { cases: [c], hookErrors: [] } });
  };
  if (live) {
    runner.on('test', (test) => {
      if ((typeof test.currentRetry === 'function' ? test.currentRetry() : 0) === 0) live({ type: 'caseBegin', file: test.file ?? '', titles: test.titlePath() });
    });
  }
  runner.on('retry', (test, error) => retried.set(keyOf(test), [...(retried.get(keyOf(test)) ?? []), messageOf(error)]));
  runner.on('pass', (test) => record(test, 'passed'));
  runner.on('pending', (test) => record(test, 'skipped'));
  const keptFromRunning = (suite: MochaSuite | undefined, said: string): void => {
    for (const test of suite?.tests ?? []) if (!recorded.has(keyOf(test))) record(test, 'failed', undefined, said);
    for (const child of suite?.suites ?? []) keptFromRunning(child, said);
  };
  runner.on('fail', (runnable, error) => {
    if (runnable.type === 'test') return record(runnable, 'failed', error);
    hookErrors.push({ file: runnable.file ?? '', title: runnable.title, error: messageOf(error) });
    if (runnable.type === 'hook') keptFromRunning(runnable.parent, `${runnable.title}: ${messageOf(error)}`);
  });
  runner.once('end', () => writeFileSync(output, JSON.stringify({ cases, hookErrors })));
}

export = RunsetMochaReporter;
