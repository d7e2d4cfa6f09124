/**
 * The live channel between runset's reporter inside a framework process
 * (./vitest-reporter.ts, ./jest-reporter.ts, ./cucumber-reporter.ts, writing
 * through ./live-writer.ts; ./mocha-reporter.cts) and the executor following it (./live.ts): one JSON line per event.
 */

export type LiveEvent =
  /** runset's reporter was loaded: the framework started (../live-tracker.ts: the start guard). Sent once, first. */
  | { type: 'ready' }
  /** A case starts running (its first attempt). `file` is absolute, as the framework gives it. */
  | { type: 'caseBegin'; file: string; titles: string[] }
  /** A test file starts: every case of it begins, when the framework cannot tell a case's start. */
  | { type: 'fileBegin'; file: string }
  /** Final results, as a report in the adapter's own format holding only these cases. */
  | { type: 'results'; report: unknown };

/** How an adapter lets its framework report live, for one installed version. */
export interface LiveReporting {
  /** Arguments added to a run that load runset's reporter beside the framework's report. */
  args: string[];
  /** Whether the framework tells each case's start (else a case begins with its file). */
  caseStarts: boolean;
  /**
   * The framework constructs runset's reporter (which then says `ready`) before
   * it runs any setup of the suite's own (a globalSetup, BeforeAll hooks), so a
   * process silent past PROCESS_START_MS is stuck starting (../live-tracker.ts: the start guard).
   * Not Jest: it runs its globalSetup first.
   */
  readyBeforeSetup: boolean;
}
