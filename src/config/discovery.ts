/**
 * What discovery does the same way for every listed kind of entry (Playwright's
 * in ./playwright-discovery.ts, the frameworks' in ./framework-discovery.ts):
 * which entries are still to list, how many are listed at once, how a failure
 * names its entry, and how the cases take their entry's place.
 */
import type { TestSpec } from '../core/types.js';
import { nameCases } from './case-names.js';
import { ConfigError, deepFreeze, type SuiteConfig } from './suite.js';

/** Entries listed at once: each listing is a process loading the suite. */
export const LIST_CONCURRENCY = 4;

/** The entries of one kind discovery expands (those not yet listed), with their index in `tests`. */
export function unlistedEntries<S extends TestSpec & { case?: unknown }>(config: SuiteConfig, isKind: (test: TestSpec) => test is S): Array<{ test: S; index: number }> {
  return config.tests.flatMap((test, index) => (isKind(test) && test.case === undefined ? [{ test, index }] : []));
}

/** The config with each listed entry replaced by its cases (`listed[i]` for `entries[i]`), names made unique. */
export function withCases(config: SuiteConfig, entries: ReadonlyArray<{ index: number }>, listed: readonly TestSpec[][]): SuiteConfig {
  const byIndex = new Map(entries.map(({ index }, i) => [index, listed[i] as TestSpec[]]));
  const tests: TestSpec[] = config.tests.flatMap((test, index) => byIndex.get(index) ?? [test]);
  return Object.freeze({ ...config, tests: Object.freeze(nameCases(config, tests).map((t) => deepFreeze(t))) });
}

/** A ConfigError naming the entry: its framework (`title`), its place in `tests`, its name and folder. */
export function entryFailure(file: string, title: string, entry: TestSpec & { dir: string }, index: number, problem: string, expected: string): never {
  throw new ConfigError({ file, path: `tests[${index}]`, problem: `${title} suite ${JSON.stringify(entry.name)} (${entry.dir}): ${problem}`, expected });
}

/** `fn` over `items`, at most `limit` at a time, results in order; the first failure rejects. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
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
