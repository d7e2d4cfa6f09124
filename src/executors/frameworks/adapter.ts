/**
 * What runset needs of a test framework to run its suite case by case, the
 * same way for every framework: how to ask it for its cases, how to ask it to
 * run some of them in one process, and how to read its machine-readable report
 * (never its human output). Each framework is one adapter (./vitest.ts,
 * ./jest.ts, ./mocha.ts, ./cucumber.ts, ./pytest.ts, ./newman.ts); listing (./listing.ts) and the executor (./index.ts) are shared.
 */
import type { TProperties } from 'typebox';
import type { FrameworkCase, FrameworkName, FrameworkTestSpec } from '../../core/types.js';
import type { ReportedAttachment } from './attachments.js';
import type { LiveReporting } from './live-events.js';

/** One case as a framework's report tells of it. */
export interface ReportedCase {
  /** Relative to the entry's folder, with / separators. */
  file: string;
  /** describe titles, then the test's own. */
  titles: string[];
  status: 'passed' | 'failed' | 'skipped';
  durationMs: number;
  /** Executions, retries included (0 for a skipped case). */
  attempts: number;
  /** The framework's own first lines of the (last) failure; null when it passed. */
  error: string | null;
  /** What the report says of it: every failure message in full. */
  output: string;
  /** The case's own tags, where the framework has them (Vitest). */
  tags?: string[];
  /** Its line in the file, where the framework selects cases by line (Cucumber). */
  line?: number;
  /** Files it attached, where the framework has attachments (Cucumber, Vitest, pytest). */
  attachments?: ReportedAttachment[];
}

export interface FrameworkReport {
  cases: ReportedCase[];
  /** Files that failed as a whole (a syntax error, a hook that threw), with the framework's message: their cases have no result. */
  fileErrors: Map<string, string>;
}

/** Which copy of a framework runs a suite (./locate.ts finds it). */
export interface FrameworkInstall {
  cli: string;
  version: string;
  /** A program run with the adapter's arguments as they are, instead of Node running `cli` (pytest: the Python interpreter). */
  program?: string;
}

/** Where a share's process writes its report, and how many workers it may use. */
export interface RunPlan {
  report: string;
  workers: number;
  /** The set's variables, for a framework that takes them as arguments or a file rather than from its environment (Newman). */
  variables?: Readonly<Record<string, string>>;
}

/**
 * What every kind of listed entry says of the framework that runs it,
 * Playwright's (../playwright/adapter.ts) as each framework's: its name and
 * where its program is found (./locate.ts, one locate for every kind).
 */
export interface RunnerAdapter<S extends { dir: string } = FrameworkTestSpec, I extends FrameworkInstall = FrameworkInstall> {
  /** The framework's name as people write it (Vitest). */
  readonly title: string;
  /** The npm package whose `bin` runs it, resolved from the suite's folder. */
  readonly packageName: string;
  /** Its program's name in that `bin`, when not the package's name (cucumber-js). */
  readonly bin?: string;
  /** Finds the program itself instead of node_modules/<packageName> (pytest: a Python interpreter; Playwright: the suite's own, else runset's); throws saying what was tried. */
  locate?(spec: S): Promise<I>;
}

export interface FrameworkAdapter extends RunnerAdapter {
  readonly type: FrameworkName;
  /** Framework workers of an entry that sets no `workers:`, for a framework that runs one test at a time unless told otherwise (Mocha); unset: half the cores. */
  readonly defaultWorkers?: number;
  /** Whether runset's `retries` can be handed to it on its command line. */
  readonly retriesFlag: boolean;
  /** Arguments that make it report every case without running any, into `report`. */
  listArgs(spec: FrameworkTestSpec, report: string): string[];
  /** Arguments that run `cases` (and perhaps a few more, whose results are ignored) in one process. */
  runArgs(spec: FrameworkTestSpec, cases: readonly FrameworkCase[], plan: RunPlan): string[];
  /** Its report's text read; throws an Error saying what is wrong with it. */
  read(text: string, dir: string): FrameworkReport;
  /**
   * Optional: how `version` of the framework reports cases as they begin and
   * end (./live.ts), its events' results being fragments `read` reads; without
   * it (or undefined for a version, or for a run `plan` it cannot follow),
   * members move when the share's process ends.
   */
  liveReporter?(version: string, plan: RunPlan): LiveReporting | undefined;

  // What a framework that is not an npm package's Node program, or that lists without a run, says instead (all optional).

  /** Config keys of its own beyond dir, args and workers (pytest's `python`), checked by its entry's schema. */
  readonly properties?: TProperties;
  /** Where people set retries when `retriesFlag` is false, for the config error. */
  readonly retriesHint?: string;
  /** Reads the listing's report when it differs from a run's. */
  readListing?(text: string, dir: string): FrameworkReport;
  /** Lists the cases without a framework process (Newman: from the collection file). */
  list?(spec: FrameworkTestSpec, install: FrameworkInstall): Promise<ReportedCase[]>;
  /** A case's member name when the framework names cases otherwise than `file › describe › title` (pytest: its node id). */
  caseName?(c: { file: string; titles: readonly string[] }): string;
}

/** `text` as a literal inside a regular expression. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A version's major and minor numbers (0 where it has none). */
export function majorMinor(version: string): [number, number] {
  const [major = 0, minor = 0] = version.split('.').map((n) => Number.parseInt(n, 10) || 0);
  return [major, minor];
}
