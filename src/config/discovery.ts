/**
 * Discovery, one way for every kind of entry that is listed into cases: an
 * EntryLister says what differs (Playwright's: ./playwright-discovery.ts; the
 * frameworks': ./framework-discovery.ts), and the three uses of a listing are
 * written once here — expanding a config by listing its entries here
 * (discoverEntries), listing them in an uploader's checkout for the archive
 * (listEntriesForUpload), and expanding an uploaded version from what its
 * archive says, never running anything of it (applyEntryListing).
 * ./suite-listing.ts runs them for every lister, Playwright's first.
 */
import type { SuiteListing } from '../core/suites.js';
import type { TestSpec } from '../core/types.js';
import { nameCases } from './case-names.js';
import { ConfigError, deepFreeze, type SuiteConfig } from './suite.js';

/** Entries listed at once: each listing is a process loading the suite. */
const LIST_CONCURRENCY = 4;

/** An entry that a lister expands: it has a folder, and a `case` once it is one of the listed cases. */
export type ListedSpec = TestSpec & { dir: string; case?: unknown };

/** What differs between kinds of listed entries; `L` is what a listing of one entry gives. */
export interface EntryLister<S extends ListedSpec, L> {
  /** Whether `test` is of this kind (listed or not); a function, not a method, as it is passed on alone. */
  readonly isKind: (test: TestSpec) => test is S;
  /** The framework's name as people write it, for the entry's ConfigErrors. */
  title(entry: S): string;
  /** What a listing that fails should have been (a ConfigError's `expected`). */
  listable(entry: S): string;
  /** Lists the entry with its installed framework; throws saying why it cannot. */
  list(entry: S): Promise<L>;
  /** The entry's cases from its listing; one without cases is a ConfigError naming the entry. */
  cases(file: string, entry: S, index: number, listing: L): S[];
  /** The key of an upload's listing item that holds this kind's part. */
  readonly uploadKey: 'report' | 'cases';
  /** What an upload ships of the listing: only what discovery reads. */
  shipped(listing: L): unknown;
  /** Where the upload should have said it, when it says nothing for the entry at `index`. */
  uploadExpected(index: number): string;
  /** The entry's cases from what an upload says for it, its shape checked first (an upload chooses it). */
  casesFromUpload(file: string, entry: S, index: number, raw: unknown): S[];
}

/** The entries of one kind discovery expands (those not yet listed), with their index in `tests`. */
export function unlistedEntries<S extends ListedSpec>(config: SuiteConfig, isKind: (test: TestSpec) => test is S): Array<{ test: S; index: number }> {
  return config.tests.flatMap((test, index) => (isKind(test) && test.case === undefined ? [{ test, index }] : []));
}

/** The config with each listed entry replaced by its cases (`listed[i]` for `entries[i]`), names made unique. */
function withCases(config: SuiteConfig, entries: ReadonlyArray<{ index: number }>, listed: readonly TestSpec[][]): SuiteConfig {
  const byIndex = new Map(entries.map(({ index }, i) => [index, listed[i] as TestSpec[]]));
  const tests: TestSpec[] = config.tests.flatMap((test, index) => byIndex.get(index) ?? [test]);
  return Object.freeze({ ...config, tests: Object.freeze(nameCases(config, tests).map((t) => deepFreeze(t))) });
}

/** A ConfigError naming the entry: its framework (`title`), its place in `tests`, its name and folder. */
export function entryFailure(file: string, title: string, entry: ListedSpec, index: number, problem: string, expected: string): never {
  throw new ConfigError({ file, path: `tests[${index}]`, problem: `${title} suite ${JSON.stringify(entry.name)} (${entry.dir}): ${problem}`, expected });
}

/**
 * An entry listed with no case at all (`with`: the entry's filters, when they
 * left none): a ConfigError for Playwright and every framework alike, since an
 * empty run must not pass.
 */
export function noCasesFound(file: string, title: string, entry: ListedSpec, index: number, filters = ''): never {
  return entryFailure(file, title, entry, index, `no test cases found${filters ? ` with ${filters}` : ''}`, 'a suite with at least one test case: an empty run must not pass');
}

/**
 * One listed case as a member, for every kind: the entry's settings with the
 * case's name and the case itself; where runset's config leaves them unset,
 * the suite's own retries and timeout (`suite`), as its framework applies them
 * (a timeout it does not say: the entry's).
 */
export function caseSpec<S extends ListedSpec & { timeoutOverride: boolean; retriesOverride: boolean }>(
  entry: S,
  name: string,
  c: NonNullable<S['case']>,
  suite: { retries: number; timeoutSeconds?: number },
): S {
  const timeoutSeconds = entry.timeoutOverride || suite.timeoutSeconds === undefined ? entry.timeoutSeconds : suite.timeoutSeconds;
  return { ...entry, name, timeoutSeconds, retries: entry.retriesOverride ? entry.retries : suite.retries, case: c };
}

/** The config with every unlisted entry of the lister's kind replaced by its cases; `config` itself when it has none. */
export async function discoverEntries<S extends ListedSpec, L>(config: SuiteConfig, lister: EntryLister<S, L>): Promise<SuiteConfig> {
  const entries = unlistedEntries(config, lister.isKind);
  if (entries.length === 0) return config;
  const listed = await mapLimited(entries, LIST_CONCURRENCY, async ({ test, index }) => lister.cases(config.file, test, index, await listEntry(config.file, lister, test, index)));
  return withCases(config, entries, listed);
}

/**
 * Lists every unlisted entry of the lister's kind with its own installed
 * framework, in the uploader's checkout, as its part of an upload's listing.
 * Each listing is also turned into cases here, so one that lists no case, or
 * lists with errors, fails before anything is uploaded, with the same
 * ConfigError the server would answer.
 */
export async function listEntriesForUpload<S extends ListedSpec, L>(config: SuiteConfig, lister: EntryLister<S, L>): Promise<SuiteListing['reports']> {
  return mapLimited(unlistedEntries(config, lister.isKind), LIST_CONCURRENCY, async ({ test, index }) => {
    const listing = await listEntry(config.file, lister, test, index);
    lister.cases(config.file, test, index, listing);
    return { entry: index, [lister.uploadKey]: lister.shipped(listing) } as SuiteListing['reports'][number];
  });
}

/**
 * `current` (`original` with the kinds before this one already expanded) with
 * each entry of the lister's kind replaced by the cases the upload gives it;
 * `shipped` maps an index in `original`'s tests to what the upload said for it.
 * Never spawns. A part missing for an entry, or malformed, is a ConfigError
 * naming it.
 */
export function applyEntryListing<S extends ListedSpec, L>(original: SuiteConfig, current: SuiteConfig, lister: EntryLister<S, L>, shipped: ReadonlyMap<number, unknown>): SuiteConfig {
  const entries = unlistedEntries(current, lister.isKind);
  if (entries.length === 0) return current;
  // Expanding the kinds before moved these entries; their order is kept, so the k-th is `original`'s k-th.
  const listed = unlistedEntries(original, lister.isKind).map(({ test, index }) => {
    const raw = shipped.get(index);
    if (raw === undefined) entryFailure(original.file, lister.title(test), test, index, 'the upload has no listing for it', lister.uploadExpected(index));
    return lister.casesFromUpload(original.file, test, index, raw);
  });
  return withCases(current, entries, listed);
}

async function listEntry<S extends ListedSpec, L>(file: string, lister: EntryLister<S, L>, test: S, index: number): Promise<L> {
  try {
    return await lister.list(test);
  } catch (error) {
    return entryFailure(file, lister.title(test), test, index, `cannot be listed: ${(error as Error).message}`, lister.listable(test));
  }
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
