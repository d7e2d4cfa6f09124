/**
 * The reporter runset adds to a Jest share (`--reporters=default
 * --reporters=<this file>`, beside `--json`): inside the Jest process it tells
 * runset, as it happens, that a file began (onTestStart), that a case began
 * (onTestCaseStart, Jest 29.6 and later) and how it ended, through
 * ./live-writer.ts. Jest reports every attempt of a retried case
 * (jest.retryTimes), and nothing here knows how many retries a file set, so a
 * failed attempt settles nothing: its case ends with its file
 * (onTestFileResult). A passed or skipped one is final at once. Results are
 * sent as entries of Jest's JSON report, so runset reads them with the reader
 * of the report itself. The types below are the part of Jest's reporter API
 * used here.
 */
import { LiveWriter } from './live-writer.js';

interface JestTest {
  readonly path: string;
}

interface JestAssertionResult {
  readonly ancestorTitles: string[];
  readonly title: string;
  readonly status: string;
  readonly duration?: number | null;
  readonly failureMessages: string[];
  readonly invocations?: number;
}

export default class RunsetJestReporter {
  private readonly writer = new LiveWriter();

  onTestStart(test: JestTest): void {
    this.writer.send({ type: 'fileBegin', file: test.path });
  }

  onTestCaseStart(test: JestTest, info: { ancestorTitles: string[]; title: string }): void {
    this.writer.send({ type: 'caseBegin', file: test.path, titles: [...info.ancestorTitles, info.title] });
  }

  onTestCaseResult(test: JestTest, result: JestAssertionResult): void {
    if (result.status === 'failed') return; // perhaps retried: its file's end settles it
    this.send(test.path, [result]);
  }

  onTestFileResult(test: JestTest, fileResult: { testResults: JestAssertionResult[] }): void {
    this.send(test.path, fileResult.testResults);
  }

  private send(file: string, results: readonly JestAssertionResult[]): void {
    const assertionResults = results.map((r) => ({
      ancestorTitles: r.ancestorTitles,
      title: r.title,
      status: r.status,
      duration: r.duration ?? null,
      failureMessages: r.failureMessages,
      invocations: r.invocations,
    }));
    this.writer.send({ type: 'results', report: { testResults: [{ name: file, assertionResults }] } });
  }
}
