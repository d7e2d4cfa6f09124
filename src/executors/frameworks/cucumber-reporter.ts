/**
 * The formatter runset adds to a Cucumber share (`--format
 * "<this file>":"<null device>"`, beside `message:FILE`): a formatter class
 * as Cucumber 11 and 12 load them, listening to the same envelopes the message
 * formatter writes, as they happen (in parallel mode too: the workers' envelopes
 * reach the coordinator's formatters as each is made). Through ./live-writer.ts it tells
 * runset that a scenario began (its first `testCaseStarted`) and, after its
 * last attempt (`testCaseFinished` without `willBeRetried`), how it ended: as
 * that scenario's own envelopes (its document pruned to it, its pickle, test
 * case and every attempt's, attachments included), read by ./cucumber-messages.ts, the reader of the
 * message stream itself. Each scenario's envelopes are dropped once sent.
 */
import type { EventEmitter } from 'node:events';
import { indexDocument, isObject, list, placeOf, str, type Json, type Node } from './cucumber-messages.js';
import { LiveWriter } from './live-writer.js';

/** The part of the options Cucumber constructs a formatter class with that is used here. */
interface FormatterOptions {
  eventBroadcaster: EventEmitter;
  /** Closes the formatter's output (the null device). */
  cleanup: () => Promise<void>;
}

export default class RunsetCucumberFormatter {
  private readonly writer = new LiveWriter();
  private readonly documents = new Map<string, Json>();
  private readonly nodes = new Map<string, Node>();
  private readonly keywords = new Map<string, string>();
  private readonly pickles = new Map<string, Json>();
  private readonly testCases = new Map<string, Json>();
  /** Each test case's envelopes of its attempts so far, and each attempt's test case. */
  private readonly attempts = new Map<string, Json[]>();
  private readonly caseOfAttempt = new Map<string, string>();
  private readonly cleanup: () => Promise<void>;

  constructor(options: FormatterOptions) {
    this.cleanup = options.cleanup;
    options.eventBroadcaster.on('envelope', (envelope: unknown) => {
      if (isObject(envelope)) this.handle(envelope);
    });
  }

  /** Called by Cucumber when the run is over. */
  async finished(): Promise<void> {
    await this.cleanup();
  }

  private handle(e: Json): void {
    if (isObject(e.gherkinDocument)) {
      this.documents.set(str(e.gherkinDocument.uri), e.gherkinDocument);
      indexDocument(e.gherkinDocument, this.nodes, this.keywords);
    } else if (isObject(e.pickle)) this.pickles.set(str(e.pickle.id), e.pickle);
    else if (isObject(e.testCase)) this.testCases.set(str(e.testCase.id), e.testCase);
    else if (isObject(e.testCaseStarted)) this.started(e, e.testCaseStarted);
    else if (isObject(e.testStepFinished)) this.attempts.get(this.caseOfAttempt.get(str(e.testStepFinished.testCaseStartedId)) ?? '')?.push(e);
    else if (isObject(e.attachment)) this.attempts.get(this.caseOfAttempt.get(str(e.attachment.testCaseStartedId)) ?? '')?.push(e);
    else if (isObject(e.testCaseFinished)) this.finishedCase(e, e.testCaseFinished);
  }

  private started(envelope: Json, started: Json): void {
    const testCaseId = str(started.testCaseId);
    this.caseOfAttempt.set(str(started.id), testCaseId);
    this.attempts.set(testCaseId, [...(this.attempts.get(testCaseId) ?? []), envelope]);
    const pickle = this.pickles.get(str(this.testCases.get(testCaseId)?.pickleId));
    if (Number(started.attempt ?? 0) === 0 && pickle) this.writer.send({ type: 'caseBegin', file: str(pickle.uri), titles: placeOf(pickle, this.nodes).titles });
  }

  private finishedCase(envelope: Json, finished: Json): void {
    const testCaseId = this.caseOfAttempt.get(str(finished.testCaseStartedId)) ?? '';
    const attempts = this.attempts.get(testCaseId);
    const testCase = this.testCases.get(testCaseId);
    const pickle = this.pickles.get(str(testCase?.pickleId));
    if (!attempts || !testCase || !pickle) return;
    attempts.push(envelope);
    if (finished.willBeRetried === true) return; // not its last attempt
    const document = this.documents.get(str(pickle.uri));
    const scenarioId = Array.isArray(pickle.astNodeIds) ? String(pickle.astNodeIds[0]) : '';
    const report = [...(document ? [{ gherkinDocument: prunedTo(document, scenarioId) }] : []), { pickle }, { testCase }, ...attempts];
    this.writer.send({ type: 'results', report });
    this.attempts.delete(testCaseId);
    for (const a of attempts) if (isObject(a.testCaseStarted)) this.caseOfAttempt.delete(str(a.testCaseStarted.id));
  }
}

/** A document holding only what names one scenario and its steps: its feature, its rule, the backgrounds above it, itself. */
function prunedTo(document: Json, scenarioId: string): Json {
  const keep = (children: Json[]): Json[] =>
    children.flatMap((child) => {
      if (isObject(child.background)) return [child];
      if (isObject(child.scenario)) return str(child.scenario.id) === scenarioId ? [child] : [];
      if (!isObject(child.rule)) return [];
      const inner = keep(list(child.rule.children));
      return inner.some((c) => !isObject(c.background)) ? [{ rule: { ...child.rule, children: inner } }] : [];
    });
  const feature = isObject(document.feature) ? document.feature : undefined;
  return { uri: document.uri, ...(feature ? { feature: { ...feature, children: keep(list(feature.children)) } } : {}) };
}
