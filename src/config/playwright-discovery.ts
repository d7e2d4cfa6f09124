/**
 * Discovery: each `type: playwright` entry of the config becomes its test cases,
 * as Playwright itself lists them (`playwright test --list --reporter=json`,
 * run by ./playwright-listing.ts), one TestSpec per case named
 * `file › describe › title` (./case-names.ts says when the entry's name comes
 * first). The expanded config is what sets are planned from; it is rebuilt (the
 * suites listed again) when the config is reloaded, and kept in memory between
 * reloads.
 *
 * A suite version (src/core/suites.ts) is listed where its dependencies are
 * installed (the uploader's checkout: listPlaywrightForUpload) and its reports
 * shipped in the archive (./suite-listing.ts); the API turns them into cases
 * with the same entryCases (applyPlaywrightListing), never running anything of
 * the upload.
 *
 * A suite that cannot be listed (syntax error, unknown project, no cases) is a
 * ConfigError naming the entry, like any other mistake in the file.
 */
import type { PlaywrightCase, PlaywrightTestSpec } from '../core/types.js';
import { errorSummary } from '../executors/playwright/error-text.js';
import type { SuiteConfig } from './suite.js';
import { entryFailure as namedEntryFailure, LIST_CONCURRENCY, mapLimited, unlistedEntries, withCases } from './discovery.js';
import { listPlaywrightEntry } from './playwright-listing.js';
import { reportForUpload, reportShapeProblem, type JsonReport, type JsonSuite } from './playwright-report.js';

/** A case with what is needed to order and name it. */
interface ListedCase {
  case: PlaywrightCase;
  column: number;
  timeoutMs: number;
  retries: number | undefined;
}

const LISTABLE = 'a Playwright suite that `npx playwright test --list` lists without errors';

/** The config with every Playwright entry replaced by its cases; `config` itself when it has none. */
export async function discoverPlaywrightTests(config: SuiteConfig): Promise<SuiteConfig> {
  const entries = playwrightEntries(config);
  if (entries.length === 0) return config;
  const listed = await mapLimited(entries, LIST_CONCURRENCY, async ({ test, index }) => {
    let report: unknown;
    try {
      report = await listPlaywrightEntry(test);
    } catch (error) {
      return entryFailure(config.file, test, index, `cannot be listed: ${(error as Error).message}`, LISTABLE);
    }
    return entryCases(config.file, test, index, report);
  });
  return withCases(config, entries, listed);
}

/** The entries discovery expands: Playwright entries not yet listed, with their index in `tests`. */
export function playwrightEntries(config: SuiteConfig): Array<{ test: PlaywrightTestSpec; index: number }> {
  return unlistedEntries(config, (test): test is PlaywrightTestSpec => test.type === 'playwright');
}

function entryFailure(file: string, entry: PlaywrightTestSpec, index: number, problem: string, expected: string): never {
  return namedEntryFailure(file, 'Playwright', entry, index, problem, expected);
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
    entryFailure(file, entry, index, `no test cases found${filters.length > 0 ? ` with ${filters.join(' and ')}` : ''}`, 'a suite with at least one test case: an empty run must not pass');
  }
  const projects = new Set(cases.map((c) => c.case.project));
  return cases.map((c) => caseSpec(entry, c, projects.size > 1));
}

/**
 * Lists every Playwright entry of `config` with its own installed
 * @playwright/test, in the uploader's checkout. Each report is also turned into
 * cases here, so a suite that lists no case, or lists with errors, fails before
 * anything is uploaded, with the same ConfigError the server would answer.
 */
export async function listPlaywrightForUpload(config: SuiteConfig): Promise<Array<{ entry: number; report: unknown }>> {
  return mapLimited(playwrightEntries(config), LIST_CONCURRENCY, async ({ test, index }) => {
    let report: unknown;
    try {
      report = await listPlaywrightEntry(test);
    } catch (error) {
      return entryFailure(config.file, test, index, `cannot be listed: ${(error as Error).message}`, LISTABLE);
    }
    entryCases(config.file, test, index, report);
    return { entry: index, report: reportForUpload(report as JsonReport) };
  });
}

/**
 * The config with each Playwright entry replaced by the cases its shipped
 * report lists (`reports`: by index in `tests`, ./suite-listing.ts reads them
 * from the upload); never spawns. A report missing for an entry, or malformed,
 * is a ConfigError naming the entry.
 */
export function applyPlaywrightListing(config: SuiteConfig, reports: ReadonlyMap<number, unknown>): SuiteConfig {
  const entries = playwrightEntries(config);
  if (entries.length === 0) return config;
  const listed: PlaywrightTestSpec[][] = entries.map(({ test, index }) => {
    if (!reports.has(index)) {
      entryFailure(config.file, test, index, 'the upload has no listing for it', `a report for tests[${index}] in the archive's listing (runset suites push lists every Playwright entry)`);
    }
    return entryCases(config.file, test, index, reports.get(index));
  });
  return withCases(config, entries, listed);
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

function caseSpec(entry: PlaywrightTestSpec, listed: ListedCase, showProject: boolean): PlaywrightTestSpec {
  const c = listed.case;
  const name = [showProject ? `[${c.project}]` : undefined, c.file, ...c.titles].filter((p) => p !== undefined).join(' › ');
  // Unset in runset's config: the suite's own timeout and retries, as Playwright will apply them.
  const timeoutSeconds = entry.timeoutOverride || listed.timeoutMs <= 0 ? entry.timeoutSeconds : listed.timeoutMs / 1000;
  const retries = entry.retriesOverride ? entry.retries : (listed.retries ?? 0);
  return { ...entry, name, timeoutSeconds, retries, case: c };
}
