/**
 * Discovery: each `type: playwright` entry of the config becomes its test cases,
 * as Playwright itself lists them (`playwright test --list --reporter=json`),
 * one TestSpec per case named `file › describe › title` (./case-names.ts says
 * when the entry's name comes first). The expanded config is what sets are
 * planned from; it is rebuilt (the suites listed again) when the config is
 * reloaded, and kept in memory between reloads.
 *
 * A suite that cannot be listed (syntax error, unknown project, no cases) is a
 * ConfigError naming the entry, like any other mistake in the file.
 */
import { spawn } from 'node:child_process';
import type { PlaywrightCase, PlaywrightTestSpec, TestSpec } from '../core/types.js';
import { locatePlaywright, playwrightEnvironment } from '../executors/playwright/locate.js';
import { errorSummary } from '../executors/playwright/error-text.js';
import { TailBuffer } from '../executors/tail-buffer.js';
import { ConfigError, deepFreeze, type SuiteConfig } from './suite.js';
import { nameCases } from './case-names.js';

/** A listing that takes longer is stuck (a config waiting on something). */
const LIST_TIMEOUT_MS = 120_000;
/** Suites listed at once: each listing is a Node process compiling the suite. */
const LIST_CONCURRENCY = 4;

/** The parts of Playwright's JSON report that listing fills in. */
interface JsonReport {
  // `filteredProjects` carries each project's `use` (its browser); `projects` does not.
  // `webServer`: the config's, when it is a single one (Playwright reports a list as null).
  config?: { projects?: JsonProject[]; filteredProjects?: JsonProject[]; webServer?: unknown };
  suites?: JsonSuite[];
  errors?: Array<{ message?: string; stack?: string }>;
}
interface JsonProject {
  name?: string;
  timeout?: number;
  retries?: number;
  use?: Record<string, unknown>;
}
interface JsonSuite {
  title: string;
  file?: string;
  specs?: Array<{ title: string; file: string; line: number; column: number; tests: Array<{ projectName: string; timeout: number }> }>;
  suites?: JsonSuite[];
}

/** A case with what is needed to order and name it. */
interface ListedCase {
  case: PlaywrightCase;
  column: number;
  timeoutMs: number;
  retries: number | undefined;
}

/** The config with every Playwright entry replaced by its cases; `config` itself when it has none. */
export async function discoverPlaywrightTests(config: SuiteConfig): Promise<SuiteConfig> {
  const entries = config.tests.flatMap((test, index) => (test.type === 'playwright' && test.case === undefined ? [{ test, index }] : []));
  if (entries.length === 0) return config;
  const listed = await mapLimited(entries, LIST_CONCURRENCY, ({ test, index }) => listEntry(config.file, test, index));
  const byIndex = new Map(entries.map(({ index }, i) => [index, listed[i] as PlaywrightTestSpec[]]));
  const tests: TestSpec[] = config.tests.flatMap((test, index) => byIndex.get(index) ?? [test]);
  return Object.freeze({ ...config, tests: Object.freeze(nameCases(config, tests).map((t) => deepFreeze(t))) });
}

async function listEntry(file: string, entry: PlaywrightTestSpec, index: number): Promise<PlaywrightTestSpec[]> {
  const where = `tests[${index}]`;
  const fail = (problem: string, expected: string): never => {
    throw new ConfigError({ file, path: where, problem: `Playwright suite ${JSON.stringify(entry.name)} (${entry.dir}): ${problem}`, expected });
  };
  let report: JsonReport;
  try {
    report = await listSuite(entry);
  } catch (error) {
    return fail(`cannot be listed: ${(error as Error).message}`, 'a Playwright suite that `npx playwright test --list` lists without errors');
  }
  const firstError = report.errors?.[0];
  if (firstError) {
    const message = errorSummary(firstError.message ?? firstError.stack ?? 'unknown error', false);
    fail(`cannot be listed: ${message}`, 'a Playwright suite that `npx playwright test --list` lists without errors');
  }
  const cases = casesOf(entry, report);
  if (cases.length === 0) {
    const filters = [entry.grep && `grep ${JSON.stringify(entry.grep)}`, entry.project && `project ${JSON.stringify(entry.project)}`].filter(Boolean);
    fail(`no test cases found${filters.length > 0 ? ` with ${filters.join(' and ')}` : ''}`, 'a suite with at least one test case: an empty run must not pass');
  }
  const projects = new Set(cases.map((c) => c.case.project));
  return cases.map((c) => caseSpec(entry, c, projects.size > 1));
}

/** Runs the listing; resolves with the parsed JSON report. */
function listSuite(entry: PlaywrightTestSpec): Promise<JsonReport> {
  const install = locatePlaywright(entry.dir);
  const args = [install.cli, 'test', '--list', '--reporter=json', '-c', entry.config, '--pass-with-no-tests'];
  if (entry.project !== undefined) args.push('--project', entry.project);
  if (entry.grep !== undefined) args.push('--grep', entry.grep);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: entry.dir, env: playwrightEnvironment(install, {}), stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err = new TailBuffer(8 * 1024);
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.write(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), LIST_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const text = Buffer.concat(out).toString('utf8');
      try {
        resolve(JSON.parse(text.slice(text.indexOf('{'))) as JsonReport);
      } catch {
        const why = signal ? `killed by ${signal} (more than ${LIST_TIMEOUT_MS / 1000}s?)` : `exited with code ${code}`;
        const stderr = errorSummary(err.toString());
        reject(new Error(`playwright test --list ${why}${stderr ? `: ${stderr}` : ''}`));
      }
    });
  });
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
          column: spec.column,
          timeoutMs: test.timeout,
          retries: project?.retries,
          case: {
            entry: entry.name, project: test.projectName, browser, file: spec.file, line: spec.line, titles: [...titles, spec.title],
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

/** `fn` over `items`, at most `limit` at a time, results in order; the first failure rejects. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

