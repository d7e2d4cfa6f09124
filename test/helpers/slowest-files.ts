/**
 * npm test's reporter: Node's own (spec on a terminal, TAP otherwise), plus,
 * just before the closing summary, the ten slowest test files, so that the
 * suite's drift toward its 10-minute budget shows in every run.
 *
 * A file's time is the sum of its top-level tests' and suites' durations
 * (they run one after another within a file), so it does not count the
 * process start or a wait for a free slot of --test-concurrency.
 *
 * RUNSET_TEST_TIMES=<file> also writes every file's time there (tab-separated,
 * slowest first), to find what to speed up next.
 *
 * Every failed test is named again beside the table, with the first lines of
 * its error: a CI log that keeps only its tail still says what failed and why.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { spec, tap } from 'node:test/reporters';

interface TestEvent {
  type: string;
  data?: {
    name?: string;
    nesting?: number;
    file?: string;
    message?: string;
    details?: { duration_ms?: number; error?: { failureType?: string; message?: string; cause?: unknown } };
  };
}

const SHOWN = 10;
/** Lines of a failed test's error repeated in the closing summary. */
const ERROR_LINES = 12;

/** One failed test (not a suite failing for its subtests), as the closing summary names it. */
function failureLines(data: NonNullable<TestEvent['data']>): string[] {
  const error = data.details?.error;
  const cause = error?.cause instanceof Error ? error.cause.message : typeof error?.cause === 'string' ? error.cause : error?.message;
  const where = data.file ? `${path.relative(process.cwd(), data.file)} › ` : '';
  return [`failed: ${where}${data.name ?? '(unnamed)'}`, ...String(cause ?? '').split('\n').slice(0, ERROR_LINES).map((line) => `  ${line}`)];
}

function table(perFile: Map<string, number>): string[] {
  const slowest = [...perFile].sort((a, b) => b[1] - a[1]).slice(0, SHOWN);
  return [
    `the ${slowest.length} slowest test files (seconds, sum of their top-level tests):`,
    ...slowest.map(([file, ms]) => `${(ms / 1000).toFixed(1).padStart(7)}  ${path.relative(process.cwd(), file)}`),
  ];
}

function writeAll(file: string, perFile: Map<string, number>): void {
  const rows = [...perFile].sort((a, b) => b[1] - a[1]).map(([f, ms]) => `${(ms / 1000).toFixed(1)}\t${path.relative(process.cwd(), f)}`);
  writeFileSync(file, rows.join('\n') + '\n');
}

async function* withSlowest(source: AsyncIterable<TestEvent>): AsyncGenerator<TestEvent> {
  const perFile = new Map<string, number>();
  const failures: string[] = [];
  for await (const event of source) {
    const data = event.data;
    if ((event.type === 'test:pass' || event.type === 'test:fail') && data?.nesting === 0 && data.file) {
      perFile.set(data.file, (perFile.get(data.file) ?? 0) + (data.details?.duration_ms ?? 0));
    }
    if (event.type === 'test:fail' && data && data.details?.error?.failureType !== 'subtestsFailed') failures.push(...failureLines(data));
    // The run's summary opens with "tests N": the table goes just before it.
    if (event.type === 'test:diagnostic' && data?.nesting === 0 && /^tests \d/.test(data.message ?? '')) {
      for (const message of [...table(perFile), ...failures]) yield { type: 'test:diagnostic', data: { nesting: 0, message } };
      if (process.env.RUNSET_TEST_TIMES) writeAll(process.env.RUNSET_TEST_TIMES, perFile);
    }
    yield event;
  }
}

export default async function* reporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const events = withSlowest(source);
  const lines = process.stdout.isTTY ? Readable.from(events).pipe(new spec()) : (tap(events as never) as AsyncIterable<string>);
  for await (const line of lines) yield String(line);
}
