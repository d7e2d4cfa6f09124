/**
 * Playwright as a kind of listed entry beside the framework adapters
 * (../frameworks/adapter.ts): its name, and its own way to be found — the
 * suite's @playwright/test as Node resolves it, else runset's lent to it
 * (./locate.ts) — through the one locate of every kind (../frameworks/locate.ts).
 *
 * What else it shares with the frameworks is written once too: a case's key
 * and name (../listed-case.ts), its member (caseSpec) and discovery
 * (src/config/discovery.ts, an EntryLister per kind), the listing process
 * (runListing, ../frameworks/listing.ts), the process path
 * (../test-process.ts), the live tracker and its guard (../live-tracker.ts),
 * a share's helpers (../share.ts). It is not one more entry of
 * FRAMEWORK_ADAPTERS, because what a FrameworkAdapter is made of does not fit
 * it: a framework share ends its cases from a report read at the end (`read`)
 * and runs with arguments built at once (`listArgs`, `runArgs`) over a
 * FrameworkTestSpec; Playwright's cases end from its reporter's events alone
 * (attempts, lanes, attachments, notices, setup projects not to run again),
 * a hang guard fed by its workers' pulses judges them, a run first writes a
 * config wrapping the suite's (./wrap-config.cts) with each project's browser
 * (./browser-choice.cts) and a test list, and its listing is Playwright's own
 * JSON report, which an upload ships and which carries its webServer ports.
 */
import type { RunnerAdapter } from '../frameworks/adapter.js';
import { locatePlaywright, type PlaywrightInstall } from './locate.js';

export const playwrightAdapter = Object.freeze({
  title: 'Playwright',
  packageName: '@playwright/test',
  bin: 'playwright',
  locate: (spec: { dir: string }): Promise<PlaywrightInstall> => Promise.resolve().then(() => locatePlaywright(spec.dir)),
}) satisfies RunnerAdapter<{ dir: string }, PlaywrightInstall>;
