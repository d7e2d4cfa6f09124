/**
 * Cucumber's message stream (`--format message:FILE`, one JSON envelope a
 * line): the Gherkin documents and pickles name the cases, the test cases say
 * which pickles run, and each attempt's started / step finished / finished
 * envelopes give its outcome, messages and duration.
 *
 * - **Names** are Cucumber's own (its JUnit report's, with the feature):
 *   Feature › Rule › Scenario, and for an outline's example row also its
 *   Examples' name and `#<examples>.<row>`, with the row's scenario name after
 *   a colon when its values change it (`#1.2: eat 5`). Empty names are left out.
 * - **Outcome** of an attempt is its most severe step's, in Cucumber's order:
 *   passed < skipped < pending < undefined < ambiguous < failed. Skipped (a
 *   step returned 'skipped') is a skip; pending, undefined and ambiguous fail,
 *   as Cucumber's default `strict` mode fails the run for them: a scenario
 *   whose steps were never written must not pass.
 * - **Attempts** are the test case's started attempts (`--retry`); the last
 *   finished one decides; duration is all attempts' time together.
 * - **Attachments** of every attempt: logs and links (`this.log`,
 *   `this.link`) go into the output, anything else attached is a file.
 */
import { errorSummary } from '../playwright/error-text.js';
import type { FrameworkReport, ReportedCase } from './adapter.js';
import type { ReportedAttachment } from './attachments.js';

/** The label of an outline's example row: `#1.2`, or `#1.2: name`. */
export const EXAMPLE_LABEL = /^#\d+\.\d+(?:: ([\s\S]*))?$/;

const SEVERITY = ['UNKNOWN', 'PASSED', 'SKIPPED', 'PENDING', 'UNDEFINED', 'AMBIGUOUS', 'FAILED'];

export type Json = Record<string, unknown>;

export interface Node {
  titles: string[];
  line: number;
}

interface StepResult {
  testStepId: string;
  status: string;
  message: string;
}

interface Attempt {
  attempt: number;
  startedMs: number;
  finishedMs?: number;
  steps: StepResult[];
  /** Its `attachment` envelopes (`this.attach`, `this.log`, `this.link`). */
  attachments: Json[];
}

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
export const str = (value: unknown): string => (typeof value === 'string' ? value : '');
export const list = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);

function millis(timestamp: unknown): number {
  if (!isObject(timestamp)) return 0;
  return Number(timestamp.seconds ?? 0) * 1000 + Number(timestamp.nanos ?? 0) / 1e6;
}

function lineOf(node: Json): number {
  return isObject(node.location) && typeof node.location.line === 'number' ? node.location.line : 0;
}

/** The stream's text, or (a live fragment, ./cucumber-reporter.ts) a JSON list of its envelopes. */
export function readCucumberMessages(text: string): FrameworkReport {
  const envelopes: Json[] = [];
  if (text.startsWith('[')) {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed) || !parsed.every(isObject)) throw new Error('the list of envelopes holds something else');
    envelopes.push(...parsed);
  } else for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let envelope: unknown;
    try {
      envelope = JSON.parse(line);
    } catch (error) {
      throw new Error(`line ${i + 1} of the message stream is not JSON (${(error as Error).message})`);
    }
    if (!isObject(envelope)) throw new Error(`line ${i + 1} of the message stream is not an envelope`);
    envelopes.push(envelope);
  }
  const nodes = new Map<string, Node>();
  const keywords = new Map<string, string>();
  const pickles = new Map<string, Json>();
  const testCases = new Map<string, Json>();
  const attempts = new Map<string, Attempt & { testCaseId: string }>();
  const fileErrors = new Map<string, string>();
  let runError = '';
  for (const e of envelopes) {
    if (isObject(e.gherkinDocument)) indexDocument(e.gherkinDocument, nodes, keywords);
    else if (isObject(e.pickle)) pickles.set(str(e.pickle.id), e.pickle);
    else if (isObject(e.testCase)) testCases.set(str(e.testCase.id), e.testCase);
    else if (isObject(e.testCaseStarted)) {
      const s = e.testCaseStarted;
      attempts.set(str(s.id), { testCaseId: str(s.testCaseId), attempt: Number(s.attempt ?? 0), startedMs: millis(s.timestamp), steps: [], attachments: [] });
    } else if (isObject(e.testStepFinished)) {
      const f = e.testStepFinished;
      const result = isObject(f.testStepResult) ? f.testStepResult : {};
      const exception = isObject(result.exception) ? result.exception : {};
      attempts.get(str(f.testCaseStartedId))?.steps.push({ testStepId: str(f.testStepId), status: str(result.status), message: str(result.message) || str(exception.message) });
    } else if (isObject(e.attachment)) {
      attempts.get(str(e.attachment.testCaseStartedId))?.attachments.push(e.attachment);
    } else if (isObject(e.testCaseFinished)) {
      const a = attempts.get(str(e.testCaseFinished.testCaseStartedId));
      if (a) a.finishedMs = millis(e.testCaseFinished.timestamp);
    } else if (isObject(e.parseError)) {
      const uri = isObject(e.parseError.source) ? str(e.parseError.source.uri) : '';
      fileErrors.set(uri, str(e.parseError.message));
    } else if (isObject(e.testRunHookFinished) && isObject(e.testRunHookFinished.result) && e.testRunHookFinished.result.status === 'FAILED') {
      runError ||= `a BeforeAll or AfterAll hook failed: ${str(e.testRunHookFinished.result.message)}`;
    } else if (isObject(e.testRunFinished)) {
      const exception = isObject(e.testRunFinished.exception) ? e.testRunFinished.exception : {};
      runError ||= str(e.testRunFinished.message) || str(exception.message);
    }
  }
  const byCase = new Map<string, Attempt[]>();
  for (const a of attempts.values()) byCase.set(a.testCaseId, [...(byCase.get(a.testCaseId) ?? []), a]);
  const cases: ReportedCase[] = [];
  for (const testCase of testCases.values()) {
    const pickle = pickles.get(str(testCase.pickleId));
    if (!pickle) throw new Error(`test case ${str(testCase.id)} names a pickle the stream does not hold`);
    const finished = (byCase.get(str(testCase.id)) ?? []).filter((a) => a.finishedMs !== undefined).sort((a, b) => a.attempt - b.attempt);
    const reported = caseOf(pickle, testCase, finished, nodes, keywords);
    if (reported) cases.push(reported);
  }
  // A failed BeforeAll leaves every scenario without a result: each carries the hook's words.
  if (runError) for (const uri of new Set([...pickles.values()].map((p) => str(p.uri)))) if (!fileErrors.has(uri)) fileErrors.set(uri, runError);
  return { cases, fileErrors };
}

/** Every scenario and outline row of one document by its id (the names and lines Cucumber gives them), and each step's keyword. */
export function indexDocument(doc: Json, nodes: Map<string, Node>, keywords: Map<string, string>): void {
  const feature = isObject(doc.feature) ? doc.feature : undefined;
  if (!feature) return;
  const walk = (children: Json[], above: string[]) => {
    for (const child of children) {
      if (isObject(child.rule)) walk(list(child.rule.children), [...above, str(child.rule.name)]);
      const scenario = isObject(child.scenario) ? child.scenario : isObject(child.background) ? child.background : undefined;
      if (!scenario) continue;
      for (const step of list(scenario.steps)) keywords.set(str(step.id), str(step.keyword));
      const titles = [...above, str(scenario.name)];
      nodes.set(str(scenario.id), { titles, line: lineOf(scenario) });
      for (const [i, examples] of list(scenario.examples).entries()) {
        for (const [j, row] of list(examples.tableBody).entries()) {
          nodes.set(str(row.id), { titles: [...titles, str(examples.name), `#${i + 1}.${j + 1}`], line: lineOf(row) });
        }
      }
    }
  };
  walk(list(feature.children), [str(feature.name)]);
}

function caseOf(pickle: Json, testCase: Json, finished: Attempt[], nodes: Map<string, Node>, keywords: Map<string, string>): ReportedCase | undefined {
  const { titles, line } = placeOf(pickle, nodes);
  const reported: ReportedCase = {
    file: str(pickle.uri),
    titles,
    status: 'passed',
    durationMs: Math.round(finished.reduce((sum, a) => sum + Math.max(0, (a.finishedMs ?? a.startedMs) - a.startedMs), 0)),
    attempts: finished.length,
    error: null,
    output: '',
    line,
  };
  const tags = list(pickle.tags).map((t) => str(t.name).replace(/^@/, '')).filter((t) => t !== '');
  if (tags.length > 0) reported.tags = tags;
  const last = finished[finished.length - 1];
  // Not finished (the process ended first): no result, so the case is missing from the report.
  if (!last) return undefined;
  const steps = stepsOf(testCase, pickle, keywords);
  const failures = finished.map((a) => failureOf(a, steps)).filter((f) => f !== undefined);
  const worst = worstStatus(last);
  const { logs, files } = attachmentsOf(finished);
  reported.output = [...logs, ...failures.map((f) => f.message)].join('\n\n');
  if (files.length > 0) reported.attachments = files;
  if (worst === 'SKIPPED') return { ...reported, status: 'skipped', attempts: 0 };
  if (worst === 'PASSED') return reported;
  const said = failureOf(last, steps)?.message ?? `${worst.toLowerCase()} (the report gives no message)`;
  return { ...reported, status: 'failed', error: errorSummary(said, false) || said };
}

/** A pickle's titles (its scenario's, or its example row's) and line, from its document's nodes. */
export function placeOf(pickle: Json, nodes: Map<string, Node>): { titles: string[]; line: number } {
  const ids = Array.isArray(pickle.astNodeIds) ? pickle.astNodeIds.map(String) : [];
  const scenario = nodes.get(ids[0] ?? '');
  const row = ids.length > 1 ? nodes.get(ids[ids.length - 1] ?? '') : undefined;
  const name = str(pickle.name);
  let titles: string[];
  if (row) {
    const label = row.titles[row.titles.length - 1] as string;
    const outline = row.titles[row.titles.length - 3];
    titles = [...row.titles.slice(0, -1), outline === name ? label : `${label}: ${name}`];
  } else titles = scenario ? [...scenario.titles.slice(0, -1), scenario.titles[scenario.titles.length - 1] || name] : [name];
  return { titles: titles.filter((t) => t !== ''), line: (row ?? scenario)?.line ?? 0 };
}

/** Each test step of the case: its keyword and text as the scenario reads (an outline row's values in), or '' for a hook. */
function stepsOf(testCase: Json, pickle: Json, keywords: Map<string, string>): Map<string, string> {
  const texts = new Map(list(pickle.steps).map((s) => [str(s.id), `${keywords.get(Array.isArray(s.astNodeIds) ? String(s.astNodeIds[0]) : '') ?? ''}${str(s.text)}`]));
  return new Map(list(testCase.testSteps).map((s) => [str(s.id), texts.get(str(s.pickleStepId)) ?? '']));
}

/** Logs and links (`this.log`, `this.link`) are text for the output; anything else attached is a file. */
const LOG_TYPES = new Set(['text/x.cucumber.log+plain', 'text/uri-list']);

/** What the attempts attached: their logs as lines of output, their files as attachments (bytes as base64). */
function attachmentsOf(attempts: readonly Attempt[]): { logs: string[]; files: ReportedAttachment[] } {
  const logs: string[] = [];
  const files: ReportedAttachment[] = [];
  for (const a of attempts.flatMap((attempt) => attempt.attachments)) {
    const base64 = str(a.contentEncoding) === 'BASE64';
    const mediaType = str(a.mediaType) || 'application/octet-stream';
    if (LOG_TYPES.has(mediaType)) logs.push(base64 ? Buffer.from(str(a.body), 'base64').toString('utf8') : str(a.body));
    else files.push({ name: str(a.fileName) || 'attachment', contentType: mediaType, body: base64 ? str(a.body) : Buffer.from(str(a.body)).toString('base64') });
  }
  return { logs, files };
}

function worstStatus(attempt: Attempt): string {
  return attempt.steps.reduce((worst, s) => (SEVERITY.indexOf(s.status) > SEVERITY.indexOf(worst) ? s.status : worst), 'PASSED');
}

/** The attempt's most severe failing step, in Cucumber's words (its message), or named by runset when Cucumber gives none. */
function failureOf(attempt: Attempt, steps: Map<string, string>): { message: string } | undefined {
  const worst = worstStatus(attempt);
  if (worst === 'PASSED' || worst === 'SKIPPED') return undefined;
  const step = attempt.steps.find((s) => s.status === worst) as StepResult;
  if (step.message) return { message: step.message };
  const text = steps.get(step.testStepId);
  return { message: `${worst.charAt(0)}${worst.slice(1).toLowerCase()} ${text ? `step: ${text}` : 'hook'}` };
}
