/**
 * The `playwright` test type: a folder holding a Playwright suite. At load it
 * is checked and kept as one entry; discovery (src/config/playwright-discovery.ts)
 * then lists its test cases with Playwright itself, and each case becomes one
 * member of the sets that include it.
 */
import path from 'node:path';
import type { Static, TObject } from 'typebox';
import { Type } from '../core/typebox.js';
import type { PlaywrightTestSpec } from '../core/types.js';
import { fail } from './suite-error.js';
import { DISK_FILES, resolveTestPath, type TestTypeDefinition } from './test-type.js';

/** Playwright's own lookup order for a config file inside a folder. */
export const PLAYWRIGHT_CONFIG_NAMES = Object.freeze([
  'playwright.config.ts',
  'playwright.config.js',
  'playwright.config.mts',
  'playwright.config.mjs',
  'playwright.config.cts',
  'playwright.config.cjs',
]);

const PlaywrightProperties = {
  dir: Type.String({ minLength: 1, description: "a folder holding a playwright.config.*, relative to the config file's folder" }),
  grep: Type.Optional(Type.String({ minLength: 1, description: 'a regular expression selecting test cases by title, as for playwright test --grep' })),
  project: Type.Optional(Type.String({ minLength: 1, description: 'the name of a project of the Playwright config' })),
  workers: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, description: 'a whole number of Playwright workers from 1 to 64' })),
};

type PlaywrightRaw = Static<TObject<typeof PlaywrightProperties>>;

export const playwrightTestType: TestTypeDefinition<PlaywrightTestSpec> = {
  properties: PlaywrightProperties,
  suiteOwnsTimings: true,
  build(raw, common, ctx) {
    const { dir, grep, project, workers } = raw as PlaywrightRaw; // validated by the caller
    const at = [...ctx.path, 'dir'];
    const files = ctx.files ?? DISK_FILES;
    const folder = resolveTestPath(ctx, at, dir);
    if (!files.isFolder(folder)) {
      fail(at, `${JSON.stringify(dir)} is not a folder (${folder})`, 'a folder holding a playwright.config.* file');
    }
    const config = PLAYWRIGHT_CONFIG_NAMES.map((name) => path.join(folder, name)).find((file) => files.isFile(file));
    if (config === undefined) {
      fail(at, `no playwright.config.* in ${folder}`, `a folder holding one of ${PLAYWRIGHT_CONFIG_NAMES.join(', ')}`);
    }
    if (grep !== undefined) checkRegExp(grep, [...ctx.path, 'grep']);
    const { name, ...rest } = common;
    // Unset timeout and retries are the suite's own (discovery reads them from its config).
    const spec: PlaywrightTestSpec = {
      name,
      type: 'playwright',
      dir: folder,
      config,
      ...rest,
      timeoutOverride: raw.timeoutSeconds !== undefined,
      retriesOverride: raw.retries !== undefined,
    };
    if (grep !== undefined) spec.grep = grep;
    if (project !== undefined) spec.project = project;
    if (workers !== undefined) spec.workers = workers;
    return spec;
  },
};

function checkRegExp(text: string, at: readonly (string | number)[]): void {
  try {
    new RegExp(text);
  } catch (error) {
    fail(at, `${JSON.stringify(text)} is not a valid regular expression (${(error as Error).message})`, 'a regular expression such as "@smoke|checkout"');
  }
}
