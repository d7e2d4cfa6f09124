/**
 * A suite's listing, for every kind of listed entry (./discovery.ts), Playwright's
 * first, then the frameworks': expanding a config by listing its entries here
 * (discoverSuiteTests, what serve does), listing them in an uploader's checkout
 * with its own installed frameworks (listSuiteForUpload), and expanding an
 * uploaded version from what the upload says, as serve expands its own, never
 * running anything of the upload (applySuiteListing). An item's `entry` is the
 * entry's index in the config's `tests`: `report` for a Playwright entry,
 * `cases` for a framework's.
 */
import type { SuiteListing } from '../core/suites.js';
import { applyEntryListing, discoverEntries, listEntriesForUpload, unlistedEntries, type EntryLister, type ListedSpec } from './discovery.js';
import { frameworkLister } from './framework-discovery.js';
import { playwrightLister } from './playwright-discovery.js';
import { ConfigError, type SuiteConfig } from './suite.js';

/** In the order they are expanded: names made unique after Playwright's cases are, and a Playwright entry's failure is the one told. */
const LISTERS: ReadonlyArray<EntryLister<ListedSpec, unknown>> = [playwrightLister, frameworkLister];

const LISTING_SHAPE = '{ "version": 1, "reports": [{ "entry": <index in tests>, "report": <playwright test --list --reporter=json> } or { "entry": <index>, "cases": [...] }] }';

/** The config with every listed entry replaced by its cases; `config` itself when it has none. */
export async function discoverSuiteTests(config: SuiteConfig): Promise<SuiteConfig> {
  let expanded = config;
  for (const lister of LISTERS) expanded = await discoverEntries(expanded, lister);
  return expanded;
}

/** Lists every listed entry of `config` in this checkout; the first that fails throws its ConfigError, before anything is packed. */
export async function listSuiteForUpload(config: SuiteConfig): Promise<SuiteListing> {
  const reports: SuiteListing['reports'] = [];
  for (const lister of LISTERS) reports.push(...(await listEntriesForUpload(config, lister)));
  return { version: 1, reports: reports.sort((a, b) => a.entry - b.entry) };
}

/**
 * The config with its Playwright and framework entries replaced by the cases
 * `listing` gives them. `listing` itself not being a listing, or lacking or
 * garbling an entry's part, is a ConfigError naming the entry.
 */
export function applySuiteListing(config: SuiteConfig, listing: unknown): SuiteConfig {
  const listed = LISTERS.flatMap((lister) => unlistedEntries(config, lister.isKind)).sort((a, b) => a.index - b.index);
  const first = listed[0];
  if (first === undefined) return config;
  const refuse = (problem: string): never => {
    throw new ConfigError({ file: config.file, path: `tests[${first.index}]`, problem: `${JSON.stringify(first.test.name)}: the upload's listing ${problem}`, expected: LISTING_SHAPE });
  };
  if (listing === null || listing === undefined) refuse('is missing (the archive has no .runset/listing.json)');
  const { version, reports } = listing as Partial<SuiteListing>;
  if (version !== 1) refuse(`has version ${JSON.stringify(version)}; this server reads version 1`);
  if (!Array.isArray(reports)) refuse('has no "reports" list');
  const parts = { report: new Map<number, unknown>(), cases: new Map<number, unknown>() };
  for (const item of reports as unknown[]) {
    const { entry, report, cases } = (typeof item === 'object' && item !== null ? item : {}) as { entry?: unknown; report?: unknown; cases?: unknown };
    if (typeof entry !== 'number' || !Number.isInteger(entry)) refuse('holds a report without an integer "entry"');
    if (report !== undefined) parts.report.set(entry as number, report);
    if (cases !== undefined) parts.cases.set(entry as number, cases);
  }
  let expanded = config;
  for (const lister of LISTERS) expanded = applyEntryListing(config, expanded, lister, parts[lister.uploadKey]);
  return expanded;
}
