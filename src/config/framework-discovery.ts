/**
 * Discovery of framework entries (`type: vitest`, `jest`, …), as for
 * Playwright's (./playwright-discovery.ts): each entry is listed by its own
 * framework (src/executors/frameworks/listing.ts) and becomes one TestSpec per
 * case, named `file › describe › title` (./case-names.ts says when the entry's
 * name comes first). A suite that cannot be listed, or lists no case, is a
 * ConfigError naming the entry, with the framework's own first lines.
 *
 * An uploaded suite version's entries are listed in the uploader's checkout
 * (listFrameworksForUpload) and their cases shipped in its listing; the API
 * checks their shape and expands them with the same frameworkCases
 * (applyFrameworkListing), never running anything of the upload.
 */
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import type { ListedFrameworkCase } from '../core/suites.js';
import { FRAMEWORKS, type FrameworkTestSpec, type TestSpec } from '../core/types.js';
import type { ReportedCase } from '../executors/frameworks/adapter.js';
import { listFrameworkEntry } from '../executors/frameworks/listing.js';
import { FRAMEWORK_ADAPTERS } from '../executors/frameworks/registry.js';
import { entryFailure as namedEntryFailure, LIST_CONCURRENCY, mapLimited, unlistedEntries, withCases } from './discovery.js';
import type { SuiteConfig } from './suite.js';

export function isFrameworkSpec(test: TestSpec): test is FrameworkTestSpec {
  return (FRAMEWORKS as readonly string[]).includes(test.type);
}

/** The framework entries discovery expands: those not yet listed, with their index in `tests`. */
export function frameworkEntries(config: SuiteConfig): Array<{ test: FrameworkTestSpec; index: number }> {
  return unlistedEntries(config, isFrameworkSpec);
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

/**
 * Lists every framework entry of `config` with its own installed framework, in
 * the uploader's checkout, as the cases an upload ships: a suite that cannot be
 * listed, or lists no case, fails here, before anything is uploaded, with the
 * ConfigError the server would give (the framework's own first lines).
 */
export async function listFrameworksForUpload(config: SuiteConfig): Promise<Array<{ entry: number; cases: ListedFrameworkCase[] }>> {
  const listed = await mapLimited(frameworkEntries(config), LIST_CONCURRENCY, async ({ test, index }) => {
    let cases: ReportedCase[];
    try {
      cases = await listFrameworkEntry(test);
    } catch (error) {
      return entryFailure(config.file, test, index, `cannot be listed: ${(error as Error).message}`, `a suite that ${FRAMEWORK_ADAPTERS[test.type].title} lists without errors`);
    }
    frameworkCases(config.file, test, index, cases);
    return { entry: index, cases: cases.map(({ file, titles, tags, line }) => ({ file, titles, ...(tags ? { tags } : {}), ...(line ? { line } : {}) })) };
  });
  return listed;
}

/** Text of a name part: a path or a title, as long as any framework writes one. */
const PART = Type.String({ maxLength: 4096 });
/** What an upload may say of a framework entry's cases; an upload chooses it, so every field and count is bounded. */
const UploadedCases = Compile(
  Type.Array(
    Type.Object(
      {
        file: Type.String({ minLength: 1, maxLength: 4096 }),
        titles: Type.Array(PART, { minItems: 1, maxItems: 64 }),
        tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 100 })),
        line: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
      },
      { additionalProperties: false },
    ),
    { maxItems: 100_000 },
  ),
);

/**
 * `current` (`original` with its Playwright entries already listed) with each
 * framework entry replaced by the cases its shipped listing gives; `cases` maps
 * an index in `original`'s tests to what the upload said for it. Never spawns.
 * A listing missing for an entry, or malformed, is a ConfigError naming it.
 */
export function applyFrameworkListing(original: SuiteConfig, current: SuiteConfig, cases: ReadonlyMap<number, unknown>): SuiteConfig {
  const entries = frameworkEntries(current);
  if (entries.length === 0) return current;
  // Listing Playwright entries moved the framework entries; their order is kept, so the k-th is `original`'s k-th.
  const listed = frameworkEntries(original).map(({ test, index }) => {
    const raw = cases.get(index);
    if (raw === undefined) {
      entryFailure(original.file, test, index, 'the upload has no listing for it', `its cases at tests[${index}] in the archive's listing (runset suites push lists every framework entry)`);
    }
    if (!UploadedCases.Check(raw)) {
      const first = UploadedCases.Errors(raw)[0];
      entryFailure(original.file, test, index, `its listing is not a list of cases: ${first ? `${first.instancePath || 'the list'} ${first.message}` : 'malformed'}`, '[{ "file": <path>, "titles": [<describe>…, <title>], "tags"?: [...], "line"?: <n> }], as runset suites push writes it');
    }
    return frameworkCases(original.file, test, index, raw);
  });
  return withCases(current, entries, listed);
}

/** One entry's cases from what its framework reported; no case at all is a ConfigError (an empty run must not pass). */
export function frameworkCases(file: string, entry: FrameworkTestSpec, index: number, cases: readonly ListedFrameworkCase[]): FrameworkTestSpec[] {
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
  return namedEntryFailure(file, FRAMEWORK_ADAPTERS[entry.type].title, entry, index, problem, expected);
}
