/**
 * One batch's bookkeeping, Playwright's extension of the one live-event
 * tracker (../live-tracker.ts: members by key, begins and ends, the start
 * guard): turns the reporter's events into each member's start (each attempt's)
 * and end, keeps each case's output and files, judges whether a running case is
 * hung (the hang guard's question, with its workers' pulses) or the batch idle,
 * and ends what is left by Playwright's rules once its process is gone. No
 * processes here, so it is tested with plain events.
 */
import path from 'node:path';
import type { ArtifactFile, BatchExecutionContext, CaseResult, PlaywrightTestSpec } from '../../core/types.js';
import { ArtifactNames } from '../artifact-files.js';
import { LiveTracker, type TrackedCase } from '../live-tracker.js';
import { TailBuffer } from '../tail-buffer.js';
import { errorSummary } from './error-text.js';
import { caseKey, caseName } from '../listed-case.js';
import { stripAnsi, type ReporterEvent } from './reporter.js';

/**
 * runset's hang guard. Playwright enforces each test's timeout itself, and a
 * test it fails that way keeps its error, output, screenshot and trace. runset
 * steps in only where Playwright cannot: a worker stuck where its own timer
 * never runs (a busy loop, a blocking call). Each worker pulses every second
 * while its event loop runs (wrap-config.cts), with its test's timeout as it
 * stands (test.setTimeout, test.slow() at run time). A test is hung when both:
 * - nothing came from it or its worker (pulse, output) for QUIET_MS, and
 * - it began more than guardLimitMs(its timeout) ago.
 * So a worker that pulses is never killed: Playwright can still stop its test.
 */
export const QUIET_MS = 10_000;

/**
 * The timeout, as long again for hooks and fixture teardown (Playwright gives
 * them a slot of their own after a timeout), plus 10 s. A test with no timeout
 * (Playwright's 0) is judged by the entry's timeoutSeconds (effectiveTimeoutMs).
 */
export function guardLimitMs(timeoutMs: number): number {
  return 2 * timeoutMs + 10_000;
}

/**
 * How long a batch may go without any event while tests still wait to begin (a
 * stuck globalSetup or webServer). Before its first event, the start guard's
 * PROCESS_START_MS: Playwright constructs runset's reporter (`ready`) once its
 * config is loaded, before its webServer boots and its globalSetup runs (those
 * may take long by right).
 */
export const IDLE_LIMIT_MS = 5 * 60_000;

interface CaseState extends TrackedCase {
  key: string;
  spec: PlaywrightTestSpec;
  attempts: number;
  inFlight: boolean;
  /** Playwright's test id, once it began. */
  id: string | undefined;
  /** The current attempt's timeout as last known: its start's, then its worker's pulses. */
  timeoutMs: number;
  startedAt: number;
  attemptStartedAt: number;
  /** The last sign of life of the current attempt: its begin, its output, its worker's pulse. */
  lastSignAt: number;
  /** The worker slot of the latest attempt, when Playwright told it. */
  lane: number | undefined;
  output: TailBuffer;
  artifacts: ArtifactFile[];
  names: ArtifactNames;
}

export type BatchEnd =
  | { kind: 'exited'; code: number | null; signal: string | null; log: string }
  | { kind: 'killed'; reason: string }
  | { kind: 'aborted' };

export class BatchTracker extends LiveTracker<CaseState, ReporterEvent> {
  private readonly globalErrors: string[] = [];
  /** Output outside any test (a webServer's, globalSetup's): shown with a failure of the whole run. */
  private readonly runnerOutput = new TailBuffer(16 * 1024);
  /**
   * Tests that failed for good in this run, this batch's or not (a setup project
   * Playwright ran as a dependency): when cases never begin, these are why.
   */
  private readonly failures: string[] = [];
  /** What runset changed about the run (video turned off), by text: the head of the output of its projects' members (null: every member). */
  private readonly notices = new Map<string, Set<string> | null>();
  private listed: Set<string> | undefined;
  /** Projects a new Playwright run would run again before the tests (setup) or after (teardown). */
  private setupProjects: string[] = [];
  /** Every project a test of which began in this run, the batch's or not. */
  private readonly begunProjects = new Set<string>();
  private lastEventAt: number;

  constructor(specs: readonly PlaywrightTestSpec[], ctx: Pick<BatchExecutionContext, 'onBegin' | 'onEnd'>, now: () => number = Date.now) {
    super(ctx, now);
    this.lastEventAt = now();
    specs.forEach((spec, index) => {
      if (!spec.case) return;
      const key = caseKey(spec.case);
      this.track(key, {
        key, index, spec, attempts: 0, begun: false, inFlight: false, id: undefined, timeoutMs: spec.timeoutSeconds * 1000,
        startedAt: 0, attemptStartedAt: 0, lastSignAt: 0, lane: undefined, output: new TailBuffer(), artifacts: [], names: new ArtifactNames(), ended: false,
      });
    });
  }

  handle(event: ReporterEvent): void {
    // A worker's pulse says it lives, not that the run moves on: it does not hold off idle().
    if (event.type === 'pulse') return this.pulse(event);
    this.lastEventAt = this.now();
    this.heard();
    if (event.type === 'begin') {
      this.listed = new Set(event.keys);
      this.setupProjects = event.setupProjects ?? [];
    } else if (event.type === 'error') this.globalErrors.push(event.message);
    else if (event.type === 'notice') this.notice(event.text, event.projects);
    else if (event.type === 'output') this.output(event.key, event.text);
    else if (event.type === 'testBegin') this.testBegin(event);
    else if (event.type === 'testEnd') this.testEnd(event);
  }

  /** A case the hang guard judges hung (QUIET_MS silent and past guardLimitMs), if any: the batch must be killed. */
  overdue(): { index: number } | undefined {
    const now = this.now();
    const hung = this.cases().find(
      (c) => c.inFlight && !c.ended && now - c.lastSignAt > QUIET_MS && now - c.attemptStartedAt > guardLimitMs(c.timeoutMs),
    );
    return hung && { index: hung.index };
  }

  /** Nothing running, something left to run, and no word from Playwright for IDLE_LIMIT_MS (before its first: `silent`). */
  idle(): boolean {
    const states = this.cases();
    if (states.some((c) => c.inFlight && !c.ended) || !states.some((c) => !c.ended)) return false;
    return this.started ? this.now() - this.lastEventAt > IDLE_LIMIT_MS : this.silent();
  }

  /**
   * Ends the hung case, keeping what it streamed and the files of its earlier
   * attempts; returns why the batch is killed, for the others (finish).
   */
  failHung(index: number): string {
    const state = this.caseAt(index);
    if (!state || state.ended) return "runset's hang guard stopped the Playwright run";
    const now = this.now();
    const seconds = (ms: number) => `${Math.round(ms / 1000)}s`;
    this.end(state, {
      passed: false,
      error: `hung: runset's hang guard killed Playwright and its browsers ${seconds(now - state.attemptStartedAt)} after the test began, ` +
        `past its timeout of ${seconds(state.timeoutMs)} and its teardown, with no sign of life from its Playwright worker for ${seconds(now - state.lastSignAt)} ` +
        '(a busy loop or a blocking call, which Playwright\'s own timer cannot interrupt)',
    });
    return `another test of the same Playwright run, ${nameOfKey(state.key)}, hung, and runset's hang guard stopped the run`;
  }

  /** Ends every case not ended yet, once the Playwright process is gone. */
  finish(end: BatchEnd): void {
    if (end.kind === 'aborted') return; // the worker gives them back to WAITING itself
    const setup = this.setupProjects.filter((p) => this.begunProjects.has(p));
    for (const state of this.cases()) {
      if (state.ended) continue;
      if (end.kind === 'exited') this.end(state, { passed: false, error: this.whyNotRun(state, end) });
      else if (setup.length > 0) this.end(state, { passed: false, error: notRunAgain(end.reason, setup) });
      else this.end(state, { passed: false, error: `interrupted: ${end.reason}; runset runs it again`, interrupted: true });
    }
  }

  private whyNotRun(state: CaseState, end: Extract<BatchEnd, { kind: 'exited' }>): string {
    // Playwright lists no test at all when its setup fails (globalSetup, webServer): then its error is the answer.
    if (this.listed && this.globalErrors.length === 0 && !state.begun && !this.listed.has(state.key)) {
      return 'test case not found in the suite any more (renamed or removed since runset listed it: reload the config with SIGHUP)';
    }
    const how = end.code !== null ? `exited with code ${end.code}` : `was killed by ${end.signal ?? 'a signal'}`;
    const when = state.begun ? 'while this test was running' : 'before running this test';
    // Playwright's own words: what it reported (onError: globalSetup, webServer…), else what it printed (a config error, a crash).
    const printed = this.runnerOutput.toString() + end.log;
    // With --max-failures=0 Playwright skips tests only when a project they depend on failed.
    const dependency = !state.begun && this.failures.length > 0 ? `a test of a project it depends on failed: ${this.failures.slice(0, 3).join('; ')}` : '';
    const cause = errorSummary(this.globalErrors.join('\n'), false) || dependency || errorSummary(printed);
    if (this.globalErrors.length > 0) state.output.write(`\n── Playwright's errors ──\n${this.globalErrors.join('\n\n')}\n`);
    if (printed) state.output.write(`\n── Playwright output ──\n${printed}`);
    return `Playwright ${how} ${when}${cause ? `: ${cause}` : ''}`;
  }

  private output(key: string | null, text: string): void {
    const state = key === null ? undefined : this.caseOf(key);
    if (state) {
      state.output.write(text);
      state.lastSignAt = this.now();
    } else if (key === null) this.runnerOutput.write(text);
  }

  /** A worker lives: so does the test it runs; the test's own pulse also brings its timeout as it stands. */
  private pulse(event: Extract<ReporterEvent, { type: 'pulse' }>): void {
    for (const state of this.cases()) {
      if (!state.inFlight || state.ended) continue;
      const own = event.testId !== undefined && event.testId === state.id;
      if (own && event.timeoutMs !== undefined) state.timeoutMs = effectiveTimeoutMs(event.timeoutMs, state.spec);
      if (own || state.lane === event.lane) state.lastSignAt = this.now();
    }
  }

  private notice(text: string, projects: string[] | undefined): void {
    const known = this.notices.get(text);
    if (projects === undefined || known === null) this.notices.set(text, null);
    else this.notices.set(text, new Set([...(known ?? []), ...projects]));
  }

  private testBegin(event: Extract<ReporterEvent, { type: 'testBegin' }>): void {
    this.begunProjects.add((JSON.parse(event.key) as string[])[0] ?? '');
    const state = this.caseOf(event.key);
    if (!state || state.ended) return;
    const now = this.now();
    state.attempts = event.retry + 1;
    state.inFlight = true;
    state.id = event.id;
    state.timeoutMs = effectiveTimeoutMs(event.timeoutMs, state.spec);
    state.attemptStartedAt = now;
    state.lastSignAt = now;
    if (!state.begun) state.startedAt = now;
    state.lane = event.lane;
    if (event.retry > 0) state.output.write(`\n── retry ${event.retry} ──\n`);
    this.begin(state, state.attempts, state.lane); // every attempt: the scheduler counts them
  }

  private testEnd(event: Extract<ReporterEvent, { type: 'testEnd' }>): void {
    if (event.final && !event.ok) this.failures.push(`${nameOfKey(event.key)}: ${firstParagraph(event.error ?? `test ${event.status}`).split('\n')[0]}`);
    const state = this.caseOf(event.key);
    if (!state || state.ended) return;
    state.inFlight = false;
    state.attempts = event.retry + 1;
    if (event.lane !== undefined) state.lane = event.lane;
    for (const file of event.attachments) state.artifacts.push({ ...file, name: this.nameFor(state, file, event.retry) });
    if (event.status === 'skipped') state.output.write('skipped\n');
    if (event.error) state.output.write(`${event.error}\n`);
    if (!event.final) return;
    const error = event.ok ? null : firstParagraph(event.error ?? `test ${event.status}`);
    // Playwright's own word for a case it did not run (test.skip, test.fixme, declared or called in the test): it passes, marked.
    this.end(state, { passed: event.ok, error, skipped: event.ok && event.status === 'skipped' });
  }

  private end(state: CaseState, verdict: { passed: boolean; error: string | null; interrupted?: boolean; skipped?: boolean }): void {
    state.inFlight = false;
    const result: CaseResult = {
      passed: verdict.passed,
      error: verdict.error,
      // Colours are for terminals: a webServer or a test that prints them gets them stripped here, as `error` does.
      output: this.noticesFor(state).map((n) => `runset: ${n}\n`).join('') + stripAnsi(state.output.toString()),
      attempts: state.attempts,
      durationMs: state.begun ? this.now() - state.startedAt : 0,
      artifacts: state.artifacts,
    };
    if (verdict.interrupted) result.interrupted = true;
    if (verdict.skipped) result.skipped = true;
    if (state.lane !== undefined) result.lane = state.lane;
    this.settle(state, result);
  }

  private noticesFor(state: CaseState): string[] {
    const project = state.spec.case?.project ?? '';
    return [...this.notices].flatMap(([text, projects]) => (projects === null || projects.has(project) ? [text] : []));
  }

  /** `screenshot.png`, `trace.zip`; `trace-retry1.zip` for a retry; `-2`, `-3` for more of one kind. */
  private nameFor(state: CaseState, file: { name: string; path: string }, retry: number): string {
    return state.names.next(file.name, path.extname(file.path), retry > 0 ? `-retry${retry}` : '');
  }
}

/**
 * Why a member left by a killed run is not given back to run again: a new run
 * would repeat what the setup projects that ran did (seed, wipe, sign in), and
 * that must not happen unseen.
 */
function notRunAgain(reason: string, setup: readonly string[]): string {
  const projects = `setup project${setup.length > 1 ? 's' : ''} ${setup.map((p) => `"${p}"`).join(', ')}`;
  return `not run to its end: ${reason}; runset does not start it again, since a new Playwright run would run the ${projects} again (run the set again to retry)`;
}

/** A test's timeout as Playwright tells it; for none (0), the entry's timeoutSeconds: a silent worker is still stuck. */
function effectiveTimeoutMs(playwrightMs: number, spec: PlaywrightTestSpec): number {
  return playwrightMs > 0 ? playwrightMs : spec.timeoutSeconds * 1000;
}

/** A case's name from its reporter key, its project shown when it has a name. */
function nameOfKey(key: string): string {
  const [project, file = '', ...titles] = JSON.parse(key) as string[];
  return caseName({ project: project || undefined, file, titles });
}

/** The error up to its call log or stack: what a person reads first. */
function firstParagraph(text: string): string {
  const cut = text.search(/\n\s*(Call log:|at \S+ \(|at \/)/);
  return (cut > 0 ? text.slice(0, cut) : text).trim();
}
