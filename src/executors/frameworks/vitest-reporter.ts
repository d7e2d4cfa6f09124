/**
 * The reporter runset adds to a Vitest share (`--reporter=<this file>`, beside
 * `--reporter=json`): inside the Vitest process it tells runset, as it
 * happens, that a case began (onTestCaseReady) and how it ended
 * (onTestCaseResult: once per case, after its retries), through ./live-writer.ts.
 * A case's end is sent as its entry of Vitest's JSON report, built by the same
 * rules as Vitest's `json` reporter (3.x and 4.x alike), so runset reads it
 * with the reader of the report itself. The public reporter API of Vitest 3
 * and 4 only; the types below are the part of it used here.
 */
import { LiveWriter } from './live-writer.js';

interface VitestError {
  message?: string;
  stack?: string;
}

interface VitestTestCase {
  readonly name: string;
  readonly parent: { readonly type: string; readonly name?: string; readonly parent?: unknown };
  readonly module: { readonly moduleId: string };
  /** Vitest 4 */
  readonly tags?: string[];
  result(): { state: 'passed' | 'failed' | 'skipped' | 'pending'; errors?: readonly VitestError[] };
  diagnostic(): { duration: number } | undefined;
}

type VitestSuite = VitestTestCase['parent'];

export default class RunsetVitestReporter {
  private readonly writer = new LiveWriter();

  onTestCaseReady(testCase: VitestTestCase): void {
    this.writer.send({ type: 'caseBegin', file: testCase.module.moduleId, titles: [...ancestorTitles(testCase), testCase.name] });
  }

  onTestCaseResult(testCase: VitestTestCase): void {
    const result = testCase.result();
    if (result.state === 'pending') return; // not ended: the report settles it
    const assertion = {
      ancestorTitles: ancestorTitles(testCase),
      title: testCase.name,
      status: result.state,
      duration: testCase.diagnostic()?.duration ?? null,
      failureMessages: (result.errors ?? []).map((e) => e.stack || e.message),
      ...(testCase.tags ? { tags: testCase.tags } : {}),
    };
    this.writer.send({ type: 'results', report: { testResults: [{ name: testCase.module.moduleId, assertionResults: [assertion] }] } });
  }
}

/** The describe titles around a case, outermost first (its module is not one). */
function ancestorTitles(testCase: VitestTestCase): string[] {
  const titles: string[] = [];
  for (let at: VitestSuite | undefined = testCase.parent; at?.type === 'suite'; at = at.parent as VitestSuite | undefined) titles.unshift(at.name ?? '');
  return titles;
}
