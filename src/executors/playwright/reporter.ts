/**
 * The Playwright reporter runset passes with `--reporter=<this file>`. It runs
 * inside the Playwright runner process and appends one JSON line per event to
 * the file named by RUNSET_REPORTER_FILE, which runset tails (../event-log.ts),
 * so the worker learns as they happen that a test case began and how it ended,
 * and moves that member's state live.
 *
 * Why a file and not a pipe or socket: Playwright may re-launch itself (1.33
 * forks itself with an ESM loader for a TypeScript ES module config, and
 * `fork()` puts its IPC channel on fd 3, so an inherited descriptor is not ours
 * any more), and a socket write is asynchronous, so what is queued when the
 * process exits is lost. A path in the environment survives any re-launch, and
 * a synchronous O_APPEND write is in the file before `writeSync` returns: every
 * event arrives, in order, whatever happens to the process right after.
 *
 * Deliberately self-contained (node builtins, types from Playwright, and the
 * case key of every listed case, ../listed-case.ts, which imports nothing): it
 * is loaded by whichever @playwright/test the suite uses, in another process.
 * The protocol is the `ReporterEvent` union below; a case is identified by
 * `caseKey`: project name, spec file relative to rootDir, then its titles.
 */
import { openSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { FullConfig, Reporter, Suite, TestCase, TestError, TestResult } from '@playwright/test/reporter';
import { caseKey } from '../listed-case.js';

export const REPORTER_FILE_ENV = 'RUNSET_REPORTER_FILE';

export type ReporterEvent =
  /** Playwright constructed this reporter: its config is loaded (before its webServer and globalSetup run). */
  | { type: 'ready' }
  /** `setupProjects`: the projects others depend on, and their teardown projects: what runs again in a new run. */
  | { type: 'begin'; keys: string[]; setupProjects?: string[] }
  /** `timeoutMs`: as Playwright will enforce it from the start (a declared test.slow() triples it); `id`: Playwright's test id. */
  | { type: 'testBegin'; key: string; retry: number; timeoutMs: number; lane?: number; id?: string }
  | {
      type: 'testEnd';
      key: string;
      retry: number;
      /** The Playwright worker slot (parallelIndex, else workerIndex on versions without it), 0-based. */
      lane?: number;
      status: TestResult['status'];
      /** This attempt settles the case: passed, skipped, expected, or out of retries. */
      final: boolean;
      ok: boolean;
      durationMs: number;
      error: string | null;
      attachments: Array<{ name: string; contentType: string; path: string }>;
    }
  | { type: 'output'; key: string | null; text: string }
  | { type: 'error'; message: string }
  /** From runset's wrapped config, not this reporter: a change to the run the output of the members of `projects` (all when absent) mentions. */
  | { type: 'notice'; text: string; projects?: string[] }
  /**
   * From each Playwright worker (wrap-config.cts), every second its event loop runs:
   * the worker slot, and the running test's id and timeout as it stands now.
   */
  | { type: 'pulse'; lane: number; testId?: string; timeoutMs?: number }
  | { type: 'end'; status: string };

// eslint-disable-next-line no-control-regex -- terminal colour codes begin with ESC; that is what is matched
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

export default class RunsetReporter implements Reporter {
  // Left open to the end: Playwright may still report (onError, output) after onEnd; exit closes it.
  private readonly fd = openEventFile();
  private rootDir = '';

  constructor() {
    this.send({ type: 'ready' }); // the tracker's PROCESS_START_MS ends here
  }

  printsToStdio(): boolean {
    // true: Playwright then adds no terminal reporter of its own; runset keeps the output per case.
    return true;
  }

  onBegin(config: FullConfig, suite: Suite): void {
    this.rootDir = config.rootDir;
    this.send({ type: 'begin', keys: suite.allTests().map((t) => this.keyOf(t)), setupProjects: setupProjectsOf(config) });
  }

  onTestBegin(test: TestCase, result: TestResult): void {
    // A declared test.slow() (on the test or its describe) triples the timeout in the worker, as here.
    const slow = test.annotations.some((a) => a.type === 'slow') ? 3 : 1;
    this.send({ type: 'testBegin', key: this.keyOf(test), retry: result.retry, timeoutMs: test.timeout * slow, lane: laneOf(result), id: test.id });
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    const outcome = test.outcome();
    const final = outcome !== 'unexpected' || result.retry >= test.retries || result.status === 'interrupted';
    this.send({
      type: 'testEnd',
      key: this.keyOf(test),
      retry: result.retry,
      lane: laneOf(result),
      status: result.status,
      final,
      ok: outcome !== 'unexpected',
      durationMs: result.duration,
      error: result.errors.length > 0 ? result.errors.map(describeError).join('\n\n') : null,
      attachments: result.attachments.flatMap((a) => (a.path ? [{ name: a.name, contentType: a.contentType, path: a.path }] : [])),
    });
  }

  onStdOut(chunk: string | Buffer, test?: TestCase): void {
    this.send({ type: 'output', key: test ? this.keyOf(test) : null, text: chunk.toString() });
  }

  onStdErr(chunk: string | Buffer, test?: TestCase): void {
    this.send({ type: 'output', key: test ? this.keyOf(test) : null, text: chunk.toString() });
  }

  onError(error: TestError): void {
    this.send({ type: 'error', message: describeError(error) });
  }

  onEnd(result: { status: string }): void {
    this.send({ type: 'end', status: result.status });
  }

  private keyOf(test: TestCase): string {
    // titlePath(): ['', project, file as its suite titles it, ...describes, title]
    const titles = test.titlePath().slice(3);
    const file = path.relative(this.rootDir, test.location.file).split(path.sep).join('/');
    return caseKey({ project: test.parent.project()?.name ?? '', file, titles });
  }

  private send(event: ReporterEvent): void {
    const line = Buffer.from(JSON.stringify(event) + '\n');
    // Synchronous and complete: events must arrive in order, and before the process exits.
    // A regular file never answers EAGAIN, and one append call keeps a line whole.
    for (let offset = 0; offset < line.length; ) offset += writeSync(this.fd, line, offset);
  }
}

function openEventFile(): number {
  const file = process.env[REPORTER_FILE_ENV];
  if (!file) throw new Error(`runset's reporter needs ${REPORTER_FILE_ENV}: the file it appends its events to`);
  return openSync(file, 'a');
}

/** Projects other projects depend on (1.31+), and the teardown projects of those (1.34+). */
function setupProjectsOf(config: FullConfig): string[] {
  const projects = config.projects as ReadonlyArray<{ name: string; dependencies?: string[]; teardown?: string }>;
  const setup = new Set(projects.flatMap((p) => p.dependencies ?? []));
  for (const p of projects) if (setup.has(p.name) && p.teardown) setup.add(p.teardown);
  return [...setup];
}

/** Playwright's worker slot: parallelIndex (1.30+ reports it), else workerIndex; undefined when neither is known. */
function laneOf(result: TestResult): number | undefined {
  const slot = (result as { parallelIndex?: number }).parallelIndex ?? (result as { workerIndex?: number }).workerIndex;
  return typeof slot === 'number' && slot >= 0 ? slot : undefined;
}

function describeError(error: TestError): string {
  const text = error.stack ?? error.message ?? error.value ?? 'unknown error';
  const where = error.location ? `\n    at ${error.location.file}:${error.location.line}:${error.location.column}` : '';
  return stripAnsi(error.stack ? text : text + where);
}
