/**
 * The reporter runset adds to a Vitest share (`--reporter=<this file>`, beside
 * `--reporter=json`): inside the Vitest process it tells runset, as it
 * happens, that a case began (onTestCaseReady) and how it ended
 * (onTestCaseResult: once per case, after its retries), through ./live-writer.ts.
 * A case's end is sent as its entry of Vitest's JSON report, built by the same
 * rules as Vitest's `json` reporter (3.x and 4.x alike), so runset reads it
 * with the reader of the report itself, and with the case's attachments
 * (which Vitest's JSON report leaves out). The public reporter API of Vitest 3
 * and 4 only; the types below are the part of it used here.
 */
import type { ReportedAttachment } from './attachments.js';
import { LiveWriter } from './live-writer.js';

interface VitestError {
  message?: string;
  stack?: string;
}

/** An attachment of an annotation (`context.annotate`, Vitest 3.2) or of an artifact (Vitest 4: failure screenshots, visual regressions). */
interface VitestAttachment {
  name?: string;
  contentType?: string;
  path?: string;
  body?: string;
  bodyEncoding?: 'base64' | 'utf-8';
}

interface VitestTestCase {
  readonly name: string;
  readonly parent: { readonly type: string; readonly name?: string; readonly parent?: unknown };
  readonly module: { readonly moduleId: string };
  /** Vitest 4 */
  readonly tags?: string[];
  result(): { state: 'passed' | 'failed' | 'skipped' | 'pending'; errors?: readonly VitestError[] };
  /** Vitest 3.2 */
  annotations?(): ReadonlyArray<{ message: string; type: string; attachment?: VitestAttachment }>;
  /** Vitest 4 */
  artifacts?(): ReadonlyArray<{ type: string; attachments?: VitestAttachment[] }>;
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
      ...attachmentsOf(testCase),
    };
    this.writer.send({ type: 'results', report: { testResults: [{ name: testCase.module.moduleId, assertionResults: [assertion] }] } });
  }
}

/**
 * The files the case attached: each annotation's attachment (named by its
 * message; Vitest has copied a path into its attachmentsDir), then those of
 * Vitest 4's other artifacts; a body as base64.
 */
function attachmentsOf(testCase: VitestTestCase): { attachments?: ReportedAttachment[] } {
  const found: Array<{ name: string; attachment: VitestAttachment }> = [];
  for (const a of testCase.annotations?.() ?? []) if (a.attachment) found.push({ name: a.message, attachment: a.attachment });
  for (const artifact of testCase.artifacts?.() ?? []) {
    if (artifact.type === 'internal:annotation') continue; // the annotations above
    for (const attachment of artifact.attachments ?? []) found.push({ name: attachment.name ?? artifact.type.replace(/^internal:/, ''), attachment });
  }
  const attachments = found.flatMap(({ name, attachment: a }): ReportedAttachment[] => {
    const contentType = a.contentType ?? 'application/octet-stream';
    if (typeof a.path === 'string' && !/^https?:\/\//.test(a.path)) return [{ name, contentType, path: a.path }];
    if (typeof a.body === 'string') return [{ name, contentType, body: a.bodyEncoding === 'utf-8' ? Buffer.from(a.body).toString('base64') : a.body }];
    return [];
  });
  return attachments.length > 0 ? { attachments } : {};
}

/** The describe titles around a case, outermost first (its module is not one). */
function ancestorTitles(testCase: VitestTestCase): string[] {
  const titles: string[] = [];
  for (let at: VitestSuite | undefined = testCase.parent; at?.type === 'suite'; at = at.parent as VitestSuite | undefined) titles.unshift(at.name ?? '');
  return titles;
}
