/**
 * The Playwright reporter runset passes with `--reporter=<this file>`. It runs
 * inside the Playwright runner process and writes one JSON line per event to a
 * pipe runset opened as an extra file descriptor (RUNSET_REPORTER_FD), so the
 * worker learns as they happen that a test case began and how it ended, and
 * moves that member's state live.
 *
 * Deliberately self-contained (node builtins only, types from Playwright): it
 * is loaded by whichever @playwright/test the suite uses, in another process.
 * The protocol is the `ReporterEvent` union below; a case is identified by
 * `caseKey`: project name, spec file relative to rootDir, then its titles.
 */
import { writeSync } from 'node:fs';
import path from 'node:path';
import type { FullConfig, Reporter, Suite, TestCase, TestError, TestResult } from '@playwright/test/reporter';

export const REPORTER_FD_ENV = 'RUNSET_REPORTER_FD';

export type ReporterEvent =
  | { type: 'begin'; keys: string[] }
  | { type: 'testBegin'; key: string; retry: number; timeoutMs: number }
  | {
      type: 'testEnd';
      key: string;
      retry: number;
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
  | { type: 'end'; status: string };

/** A case's identity on both sides of the pipe: [project, file relative to rootDir, ...titles]. */
export function caseKey(project: string, file: string, titles: readonly string[]): string {
  return JSON.stringify([project, file, ...titles]);
}

// eslint-disable-next-line no-control-regex -- terminal colour codes begin with ESC; that is what is matched
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

export default class RunsetReporter implements Reporter {
  private readonly fd = Number(process.env[REPORTER_FD_ENV] ?? 3);
  private rootDir = '';

  printsToStdio(): boolean {
    // true: Playwright then adds no terminal reporter of its own; runset keeps the output per case.
    return true;
  }

  onBegin(config: FullConfig, suite: Suite): void {
    this.rootDir = config.rootDir;
    this.send({ type: 'begin', keys: suite.allTests().map((t) => this.keyOf(t)) });
  }

  onTestBegin(test: TestCase, result: TestResult): void {
    this.send({ type: 'testBegin', key: this.keyOf(test), retry: result.retry, timeoutMs: test.timeout });
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    const outcome = test.outcome();
    const final = outcome !== 'unexpected' || result.retry >= test.retries || result.status === 'interrupted';
    this.send({
      type: 'testEnd',
      key: this.keyOf(test),
      retry: result.retry,
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
    return caseKey(test.parent.project()?.name ?? '', file, titles);
  }

  private send(event: ReporterEvent): void {
    const line = Buffer.from(JSON.stringify(event) + '\n');
    // Synchronous and complete: events must arrive in order, and before the process exits.
    for (let offset = 0; offset < line.length; ) {
      try {
        offset += writeSync(this.fd, line, offset);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      }
    }
  }
}

function describeError(error: TestError): string {
  const text = error.stack ?? error.message ?? error.value ?? 'unknown error';
  const where = error.location ? `\n    at ${error.location.file}:${error.location.line}:${error.location.column}` : '';
  return stripAnsi(error.stack ? text : text + where);
}
