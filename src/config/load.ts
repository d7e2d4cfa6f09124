/**
 * The config as the server uses it: the file loaded and validated, test types this
 * process leaves out removed (the demo without a browser), and — where sets are
 * planned (API processes) — each Playwright and framework entry expanded into its
 * test cases by listing the entry. Worker-only processes never list: members carry their cases.
 */
import type { TestType } from '../core/types.js';
import { loadSuiteConfig, type SuiteConfig } from './suite.js';
import { discoverSuiteTests } from './suite-listing.js';

export interface LoadSuiteOptions {
  /** List Playwright and framework entries into their test cases. */
  discover: boolean;
  /** Test types to leave out of the config. */
  skipTypes?: readonly TestType[];
}

export async function loadSuite(file: string, options: LoadSuiteOptions): Promise<SuiteConfig> {
  let config = loadSuiteConfig(file);
  const skip = options.skipTypes ?? [];
  if (skip.length > 0) config = Object.freeze({ ...config, tests: Object.freeze(config.tests.filter((t) => !skip.includes(t.type))) });
  return options.discover ? discoverSuiteTests(config) : config;
}
