/**
 * Playwright's part of discovery (./discovery.ts): each `type: playwright`
 * entry becomes its test cases as Playwright itself lists them
 * (`playwright test --list --reporter=json`, run by ./playwright-listing.ts),
 * one TestSpec per (case, project) named `file › describe › title`
 * (./case-names.ts says when the entry's name comes first). An upload ships the
 * report, trimmed to what is read here (reportForUpload); the API reads it with
 * the same entryCases, its shape checked first.
 *
 * A suite that cannot be listed (syntax error, unknown project, no cases) is a
 * ConfigError naming the entry, like any other mistake in the file.
 */
import type { PlaywrightCase, PlaywrightTestSpec } from '../core/types.js';
import { playwrightAdapter } from '../executors/playwright/adapter.js';
import { errorSummary } from '../executors/playwright/error-text.js';
import { caseName } from '../executors/listed-case.js';
import { caseSpec, entryFailure as namedEntryFailure, noCasesFound, type EntryLister } from './discovery.js';
import { listPlaywrightEntry } from './playwright-listing.js';
import { reportForUpload, reportShapeProblem, type JsonReport, type JsonSuite } from './playwright-report.js';

/** A case with what is needed to order and name it. */
interface ListedCase {
  case: PlaywrightCase;
  column: number;
  timeoutMs: number;
  retries: number | undefined;
}

const TITLE = playwrightAdapter.title;
const LISTABLE = 'a Playwright suite that `npx playwright test --list` lists without errors';

/** Playwright entries for discovery (./discovery.ts): listed by `playwright test --list`, an upload shipping its report. */
export const playwrightLister: EntryLister<PlaywrightTestSpec, unknown> = {
  isKind: (test): test is PlaywrightTestSpec => test.type === 'playwright',
  title: () => TITLE,
  listable: () => LISTABLE,
  list: listPlaywrightEntry,
  cases: entryCases,
  uploadKey: 'report',
  shipped: (report) => reportForUpload(report as JsonReport),
  uploadExpected: (index) => `a report for tests[${index}] in the archive's listing (runset suites push lists every Playwright entry)`,
  casesFromUpload: entryCases,
};

function entryFailure(file: string, entry: PlaywrightTestSpec, index: number, problem: string, expected: string): never {
  return namedEntryFailure(file, TITLE, entry, index, problem, expected);
}

/**
 * One entry's cases from its raw `playwright test --list --reporter=json`
 * report; never spawns. The report may come from an upload, so its shape is
 * checked before it is read: a malformed report, one with errors or one
 * without cases is a ConfigError naming the entry.
 */
export function entryCases(file: string, entry: PlaywrightTestSpec, index: number, raw: unknown): PlaywrightTestSpec[] {
  const malformed = reportShapeProblem(raw);
  if (malformed !== null) {
    entryFailure(file, entry, index, `its listing is not a Playwright JSON report: ${malformed}`, 'the report `playwright test --list --reporter=json` writes for this entry');
  }
  const report = raw as JsonReport;
  const firstError = report.errors?.[0];
  if (firstError) {
    const message = errorSummary(firstError.message ?? firstError.stack ?? 'unknown error', false);
    entryFailure(file, entry, index, `cannot be listed: ${message}`, LISTABLE);
  }
  const cases = casesOf(entry, report);
  if (cases.length === 0) {
    const filters = [entry.grep && `grep ${JSON.stringify(entry.grep)}`, entry.project && `project ${JSON.stringify(entry.project)}`].filter(Boolean);
    noCasesFound(file, TITLE, entry, index, filters.join(' and '));
  }
  const projects = new Set(cases.map((c) => c.case.project));
  return cases.map(({ case: c, timeoutMs, retries }) =>
    // Unset in runset's config: the suite's own timeout and retries, as Playwright will apply them.
    caseSpec(entry, caseName({ project: projects.size > 1 ? c.project : undefined, file: c.file, titles: c.titles }), c, {
      retries: retries ?? 0,
      ...(timeoutMs > 0 ? { timeoutSeconds: timeoutMs / 1000 } : {}),
    }),
  );
}

/** Every (spec, project) pair of the report, in file order then source order. */
function casesOf(entry: PlaywrightTestSpec, report: JsonReport): ListedCase[] {
  const projects = new Map((report.config?.filteredProjects ?? report.config?.projects ?? []).map((p) => [p.name ?? '', p]));
  const ports = webServerPortsOf(report.config?.webServer);
  const out: Array<ListedCase & { fileIndex: number }> = [];
  const walk = (suite: JsonSuite, titles: string[], fileIndex: number): void => {
    for (const spec of suite.specs ?? []) {
      for (const test of spec.tests) {
        const project = projects.get(test.projectName);
        const use = project?.use ?? {};
        const browser = typeof use.browserName === 'string' ? use.browserName : typeof use.defaultBrowserType === 'string' ? use.defaultBrowserType : 'chromium';
        out.push({
          fileIndex,
          column: spec.column ?? 0,
          timeoutMs: test.timeout ?? 0,
          retries: project?.retries,
          case: {
            entry: entry.name, project: test.projectName, browser, file: spec.file, line: spec.line, titles: [...titles, spec.title],
            ...(spec.tags && spec.tags.length > 0 ? { tags: [...new Set(spec.tags)] } : {}),
            ...(ports.length > 0 ? { webServerPorts: ports } : {}),
          },
        });
      }
    }
    for (const child of suite.suites ?? []) walk(child, [...titles, child.title], fileIndex);
  };
  (report.suites ?? []).forEach((fileSuite, fileIndex) => walk(fileSuite, [], fileIndex));
  out.sort((a, b) => a.fileIndex - b.fileIndex || a.case.line - b.case.line || a.column - b.column);
  return out;
}

/**
 * The fixed port a `webServer` listens on: its `port`, else its `url`'s (80 or
 * 443 when the url names none). What runset holds per host while a batch runs
 * (src/scheduler/webserver-gate.ts).
 */
export function webServerPortsOf(webServer: unknown): number[] {
  if (typeof webServer !== 'object' || webServer === null) return [];
  const { port, url } = webServer as { port?: unknown; url?: unknown };
  if (typeof port === 'number' && Number.isInteger(port) && port > 0) return [port];
  if (typeof url !== 'string') return [];
  try {
    const parsed = new URL(url);
    return [parsed.port !== '' ? Number(parsed.port) : parsed.protocol === 'https:' ? 443 : 80];
  } catch {
    return [];
  }
}
