/**
 * Running Playwright's own listing (`playwright test --list --reporter=json`)
 * for one `type: playwright` entry, with the entry's installed @playwright/test,
 * through the listing process of every kind (src/executors/frameworks/listing.ts),
 * and handing back the raw report. Turning a report into cases is apart
 * (./playwright-discovery.ts): the API does that from reports it did not make
 * (an upload's LISTING_FILE) and must never spawn anything for them.
 */
import type { PlaywrightTestSpec } from '../core/types.js';
import { locateFramework } from '../executors/frameworks/locate.js';
import { playwrightAdapter } from '../executors/playwright/adapter.js';
import { playwrightEnvironment } from '../executors/playwright/locate.js';
import { errorSummary } from '../executors/playwright/error-text.js';
import { LIST_TIMEOUT_MS, runListing } from '../executors/frameworks/listing.js';

/** Runs the listing in the entry's folder; resolves with the parsed JSON report, as Playwright wrote it. */
export async function listPlaywrightEntry(entry: PlaywrightTestSpec): Promise<unknown> {
  const install = await locateFramework(playwrightAdapter, entry);
  const args = ['test', '--list', '--reporter=json', '-c', entry.config, '--pass-with-no-tests'];
  if (entry.project !== undefined) args.push('--project', entry.project);
  if (entry.grep !== undefined) args.push('--grep', entry.grep);
  // The report goes to a file, as every listing's: _FILE is read first from 1.46 on, _NAME before.
  const { text, exit } = await runListing(install, entry.dir, (report) => ({
    args,
    env: playwrightEnvironment(install, entry.dir, { PLAYWRIGHT_JSON_OUTPUT_FILE: report, PLAYWRIGHT_JSON_OUTPUT_NAME: report }),
  }));
  try {
    return JSON.parse(text ?? '') as unknown;
  } catch {
    const why = exit.signal ? `killed by ${exit.signal} (more than ${LIST_TIMEOUT_MS / 1000}s?)` : `exited with code ${exit.code}`;
    const said = errorSummary(exit.log);
    throw new Error(`playwright test --list ${why}${said ? `: ${said}` : ''}`);
  }
}
