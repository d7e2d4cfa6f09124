/**
 * The frameworks' part of discovery (./discovery.ts): each framework entry
 * (`type: vitest`, `jest`, …) is listed by its own framework
 * (src/executors/frameworks/listing.ts) and becomes one TestSpec per case,
 * named `file › describe › title` (./case-names.ts says when the entry's name
 * comes first), or as its adapter names cases. A suite that cannot be listed,
 * or lists no case, is a ConfigError naming the entry, with the framework's own
 * first lines. An upload ships the cases; the API checks their shape and
 * expands them with the same frameworkCases.
 */
import { Type, Compile } from '../core/typebox.js';
import type { ListedFrameworkCase } from '../core/suites.js';
import { FRAMEWORKS, type FrameworkTestSpec, type TestSpec } from '../core/types.js';
import type { ReportedCase } from '../executors/frameworks/adapter.js';
import { listFrameworkEntry } from '../executors/frameworks/listing.js';
import { caseName } from '../executors/listed-case.js';
import { FRAMEWORK_ADAPTERS } from '../executors/frameworks/registry.js';
import { caseSpec, entryFailure as namedEntryFailure, noCasesFound, type EntryLister } from './discovery.js';

export function isFrameworkSpec(test: TestSpec): test is FrameworkTestSpec {
  return (FRAMEWORKS as readonly string[]).includes(test.type);
}

/** Framework entries for discovery (./discovery.ts): listed by their adapter, an upload shipping their cases. */
export const frameworkLister: EntryLister<FrameworkTestSpec, ReportedCase[]> = {
  isKind: isFrameworkSpec,
  title: (entry) => FRAMEWORK_ADAPTERS[entry.type].title,
  listable: (entry) => `a suite that ${FRAMEWORK_ADAPTERS[entry.type].title} lists without errors`,
  list: listFrameworkEntry,
  cases: frameworkCases,
  uploadKey: 'cases',
  shipped: (cases) => cases.map(({ file, titles, tags, line }): ListedFrameworkCase => ({ file, titles, ...(tags ? { tags } : {}), ...(line ? { line } : {}) })),
  uploadExpected: (index) => `its cases at tests[${index}] in the archive's listing (runset suites push lists every framework entry)`,
  casesFromUpload: uploadedCases,
};

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

/** An entry's cases from what an upload says of them, checked to be a bounded list of cases first. */
function uploadedCases(file: string, entry: FrameworkTestSpec, index: number, raw: unknown): FrameworkTestSpec[] {
  if (!UploadedCases.Check(raw)) {
    const first = UploadedCases.Errors(raw)[0];
    entryFailure(file, entry, index, `its listing is not a list of cases: ${first ? `${first.instancePath || 'the list'} ${first.message}` : 'malformed'}`, '[{ "file": <path>, "titles": [<describe>…, <title>], "tags"?: [...], "line"?: <n> }], as runset suites push writes it');
  }
  return frameworkCases(file, entry, index, raw);
}

/** One entry's cases from what its framework reported; no case at all is a ConfigError (an empty run must not pass). */
export function frameworkCases(file: string, entry: FrameworkTestSpec, index: number, cases: readonly ListedFrameworkCase[]): FrameworkTestSpec[] {
  const adapter = FRAMEWORK_ADAPTERS[entry.type];
  if (cases.length === 0) noCasesFound(file, adapter.title, entry, index);
  return cases.map((c) =>
    // Unset in runset's config: the suite's own retries, which the framework applies (and reports as attempts).
    caseSpec(entry, adapter.caseName?.(c) ?? caseName(c), { entry: entry.name, file: c.file, titles: [...c.titles], ...(c.tags ? { tags: [...new Set(c.tags)] } : {}), ...(c.line ? { line: c.line } : {}) }, { retries: 0 }),
  );
}

function entryFailure(file: string, entry: FrameworkTestSpec, index: number, problem: string, expected: string): never {
  return namedEntryFailure(file, FRAMEWORK_ADAPTERS[entry.type].title, entry, index, problem, expected);
}
