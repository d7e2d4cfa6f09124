/**
 * The suite as the server uses it: the file loaded and validated, test types this
 * process leaves out removed (the demo without a browser), and — where sets are
 * planned (API processes) — each Playwright and framework entry expanded into its
 * test cases by listing the suite. Worker-only processes never list: members carry their cases.
 */
import type { TestType } from '../core/types.js';
import { loadSuiteConfig, type SuiteConfig } from './suite.js';
import { discoverSuiteTests } from './suite-listing.js';

export interface LoadSuiteOptions {
  /** List Playwright and framework suites into their test cases. */
  discover: boolean;
  /** Test types to leave out of the suite. */
  skipTypes?: readonly TestType[];
}

export async function loadSuite(file: string, options: LoadSuiteOptions): Promise<SuiteConfig> {
  let suite = loadSuiteConfig(file);
  const skip = options.skipTypes ?? [];
  if (skip.length > 0) suite = Object.freeze({ ...suite, tests: Object.freeze(suite.tests.filter((t) => !skip.includes(t.type))) });
  return options.discover ? discoverSuiteTests(suite) : suite;
}
