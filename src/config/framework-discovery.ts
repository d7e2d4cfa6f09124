/**
 * Discovery of framework entries (`type: vitest`, `jest`, …), as for
 * Playwright's (./playwright-discovery.ts): each entry is listed by its own
 * framework (src/executors/frameworks/listing.ts) and becomes one TestSpec per
 * case, named `file › describe › title` (./case-names.ts says when the entry's
 * name comes first). A suite that cannot be listed, or lists no case, is a
 * ConfigError naming the entry, with the framework's own first lines.
 */
import { FRAMEWORKS, type FrameworkTestSpec, type TestSpec } from '../core/types.js';
import type { ReportedCase } from '../executors/frameworks/adapter.js';
import { listFrameworkEntry } from '../executors/frameworks/listing.js';
import { FRAMEWORK_ADAPTERS } from '../executors/frameworks/registry.js';
import { mapLimited, withCases } from './playwright-discovery.js';
import { ConfigError, type SuiteConfig } from './suite.js';

/** Suites listed at once: each listing is a framework process loading the suite. */
const LIST_CONCURRENCY = 4;

export function isFrameworkSpec(test: TestSpec): test is FrameworkTestSpec {
  return (FRAMEWORKS as readonly string[]).includes(test.type);
}

/** The framework entries discovery expands: those not yet listed, with their index in `tests`. */
export function frameworkEntries(config: SuiteConfig): Array<{ test: FrameworkTestSpec; index: number }> {
  return config.tests.flatMap((test, index) => (isFrameworkSpec(test) && test.case === undefined ? [{ test, index }] : []));
}

/** The config with every framework entry replaced by its cases; `config` itself when it has none. */
export async function discoverFrameworkTests(config: SuiteConfig): Promise<SuiteConfig> {
  const entries = frameworkEntries(config);
  if (entries.length === 0) return config;
  const listed = await mapLimited(entries, LIST_CONCURRENCY, async ({ test, index }) => {
    let cases: ReportedCase[];
    try {
      cases = await listFrameworkEntry(test);
    } catch (error) {
      return entryFailure(config.file, test, index, `cannot be listed: ${(error as Error).message}`, `a suite that ${FRAMEWORK_ADAPTERS[test.type].title} lists without errors`);
    }
    return frameworkCases(config.file, test, index, cases);
  });
  return withCases(config, entries, listed);
}

/** One entry's cases from what its framework reported; no case at all is a ConfigError (an empty run must not pass). */
export function frameworkCases(file: string, entry: FrameworkTestSpec, index: number, cases: readonly ReportedCase[]): FrameworkTestSpec[] {
  if (cases.length === 0) {
    entryFailure(file, entry, index, 'no test cases found', 'a suite with at least one test case: an empty run must not pass');
  }
  const adapter = FRAMEWORK_ADAPTERS[entry.type];
  return cases.map((c) => {
    const spec: FrameworkTestSpec = {
      ...entry,
      name: adapter.caseName ? adapter.caseName(c) : [c.file, ...c.titles].join(' › '),
      // Unset in runset's config: the suite's own retries, which the framework applies (and reports as attempts).
      retries: entry.retriesOverride ? entry.retries : 0,
      case: { entry: entry.name, file: c.file, titles: [...c.titles], ...(c.tags ? { tags: [...new Set(c.tags)] } : {}), ...(c.line ? { line: c.line } : {}) },
    };
    return spec;
  });
}

function entryFailure(file: string, entry: FrameworkTestSpec, index: number, problem: string, expected: string): never {
  const title = FRAMEWORK_ADAPTERS[entry.type].title;
  throw new ConfigError({ file, path: `tests[${index}]`, problem: `${title} suite ${JSON.stringify(entry.name)} (${entry.dir}): ${problem}`, expected });
}
