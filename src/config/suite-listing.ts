/**
 * An uploaded suite version's listing (LISTING_FILE), both ways: the uploader
 * lists its Playwright and framework entries with the checkout's own installed
 * frameworks (listSuiteForUpload), and the API expands those entries into
 * members from what the upload says, as serve expands its own (Playwright's
 * first, then the frameworks': src/config/load.ts), never running anything of
 * the upload (applySuiteListing). An item's `entry` is the entry's index in the
 * config's `tests`: `report` for a Playwright entry, `cases` for a framework's.
 */
import type { SuiteListing } from '../core/suites.js';
import { applyFrameworkListing, frameworkEntries, listFrameworksForUpload } from './framework-discovery.js';
import { applyPlaywrightListing, listPlaywrightForUpload, playwrightEntries } from './playwright-discovery.js';
import { ConfigError, type SuiteConfig } from './suite.js';

const LISTING_SHAPE = '{ "version": 1, "reports": [{ "entry": <index in tests>, "report": <playwright test --list --reporter=json> } or { "entry": <index>, "cases": [...] }] }';

/** Lists every listed entry of `config` in this checkout; the first that fails throws its ConfigError, before anything is packed. */
export async function listSuiteForUpload(config: SuiteConfig): Promise<SuiteListing> {
  const playwright = await listPlaywrightForUpload(config);
  const frameworks = await listFrameworksForUpload(config);
  return { version: 1, reports: [...playwright, ...frameworks].sort((a, b) => a.entry - b.entry) };
}

/**
 * The config with its Playwright and framework entries replaced by the cases
 * `listing` gives them. `listing` itself not being a listing, or lacking or
 * garbling an entry's part, is a ConfigError naming the entry.
 */
export function applySuiteListing(config: SuiteConfig, listing: unknown): SuiteConfig {
  const listed = [...playwrightEntries(config), ...frameworkEntries(config)].sort((a, b) => a.index - b.index);
  const first = listed[0];
  if (first === undefined) return config;
  const refuse = (problem: string): never => {
    throw new ConfigError({ file: config.file, path: `tests[${first.index}]`, problem: `${JSON.stringify(first.test.name)}: the upload's listing ${problem}`, expected: LISTING_SHAPE });
  };
  if (listing === null || listing === undefined) refuse('is missing (the archive has no .runset/listing.json)');
  const { version, reports } = listing as Partial<SuiteListing>;
  if (version !== 1) refuse(`has version ${JSON.stringify(version)}; this server reads version 1`);
  if (!Array.isArray(reports)) refuse('has no "reports" list');
  const byEntry = new Map<number, unknown>();
  const casesByEntry = new Map<number, unknown>();
  for (const item of reports as unknown[]) {
    const { entry, report, cases } = (typeof item === 'object' && item !== null ? item : {}) as { entry?: unknown; report?: unknown; cases?: unknown };
    if (typeof entry !== 'number' || !Number.isInteger(entry)) refuse('holds a report without an integer "entry"');
    if (report !== undefined) byEntry.set(entry as number, report);
    if (cases !== undefined) casesByEntry.set(entry as number, cases);
  }
  return applyFrameworkListing(config, applyPlaywrightListing(config, byEntry), casesByEntry);
}
