/**
 * A small Playwright suite for the end-to-end tests, written into a temp folder
 * with no node_modules of its own (so runset lends it its @playwright/test), and
 * a runset config whose environments each pick one part of it by tag.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { browserProblem, DEFAULT_CHROMIUM } from '../../src/executors/playwright/chromium.js';
import { tempDir } from '../helpers/server.js';

export const PW_SECRET = 'pw-s3cr3t-typed-into-a-field';

/** Why the browser tests cannot run here, or false. */
export function chromiumMissing(): string | false {
  const problem = browserProblem(process.env.RUNSET_CHROMIUM || DEFAULT_CHROMIUM);
  return problem === null ? false : `${problem} (.ci/run installs Debian's chromium)`;
}

const CONFIG = `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  timeout: 15_000,
  // A marker on the browser's command line, so a test can tell its browsers apart from any other.
  // The tests read a failure's trace: every failure keeps one (runset's own default traces only retries).
  use: { trace: 'retain-on-failure', launchOptions: { args: ['--runset-e2e-marker=' + (process.env.BROWSER_MARKER ?? 'none')] } },
});
`;

const SPECS: Record<string, string> = {
  'basic.spec.ts': `
import { test, expect } from '@playwright/test';
test.describe('shop', () => {
  test('home shows a title @main', async ({ page }) => {
    await page.setContent('<h1>Shop</h1>');
    await expect(page.locator('h1')).toHaveText('Shop');
  });
  test('sign in fails @main', async ({ page }) => {
    await page.setContent('<input id="pw"><h1>Welcome</h1>');
    await page.fill('#pw', process.env.SECRET_TOKEN ?? '');
    console.log('typed the token ' + process.env.SECRET_TOKEN);
    await expect(page.locator('h1')).toHaveText('Signed in', { timeout: 500 });
  });
});
test('needs no browser @main', async () => {});
`,
  'flaky.spec.ts': `
import { test, expect } from '@playwright/test';
test('passes on retry @flaky', async ({ page }, testInfo) => {
  await page.setContent('<p>attempt ' + testInfo.retry + '</p>');
  expect(testInfo.retry, 'the first attempt fails').toBeGreaterThan(0);
});
`,
  'live.spec.ts': `
import { test } from '@playwright/test';
import { existsSync } from 'node:fs';
for (const name of ['first', 'second']) {
  test(name + ' waits for the release file @live', async () => {
    const until = Date.now() + 20_000;
    while (!existsSync(process.env.RELEASE_FILE!)) {
      if (Date.now() > until) throw new Error('never released');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
}
`,
  'hang.spec.ts': `
import { test } from '@playwright/test';
import { writeFileSync } from 'node:fs';
test('blocks forever @hang', async ({ page }) => {
  await page.setContent('<p>blocked</p>');
  writeFileSync(process.env.PID_FILE!, String(process.pid));
  // A blocking call that never returns: Playwright's own timeout timer never gets to run, as in a busy
  // loop, but the guard's wait burns no CPU-second of the machine the whole suite shares.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
});
test('waits its turn @hang', async () => {});
`,
  'reload.spec.ts': `
import { test } from '@playwright/test';
test('listed at start @reload', async () => {});
`,
};

/** A member as GET /v0/test-run-sets/{id}/test-runs gives it. */
export interface PlaywrightMember {
  id: string;
  name: string;
  status: string;
  attempts: number;
  error: string | null;
  output: string | null;
  flaky: boolean;
  artifacts: Array<{ id: string; name: string; contentType: string; size: number; url: string }>;
  workerId: string | null;
  startedAt: string | null;
  endedAt: string | null;
}

export interface PlaywrightFixture {
  dir: string;
  suiteDir: string;
  releaseFile: string;
  pidFile: string;
  marker: string;
  config: string;
}

/** The config's entries, each with its environment: one per part of the suite, picked by tag. */
export type PlaywrightEntry = 'main' | 'flaky' | 'live' | 'hang' | 'reload';
const ENTRIES: ReadonlyArray<PlaywrightEntry> = ['main', 'flaky', 'live', 'hang', 'reload'];

/**
 * The suite and a config holding only `entries` (all by default): serve lists
 * each entry with its own Playwright process at start (about a CPU-second each),
 * so a test asks only for the entries it runs.
 */
export function writePlaywrightFixture(entries: ReadonlyArray<PlaywrightEntry> = ENTRIES): PlaywrightFixture {
  const dir = tempDir('runset-pw-e2e-');
  const suiteDir = path.join(dir, 'suite');
  mkdirSync(path.join(suiteDir, 'tests'), { recursive: true });
  writeFileSync(path.join(suiteDir, 'playwright.config.ts'), CONFIG);
  for (const [name, text] of Object.entries(SPECS)) writeFileSync(path.join(suiteDir, 'tests', name), text);
  const releaseFile = path.join(dir, 'release');
  const pidFile = path.join(dir, 'worker.pid');
  const marker = `m${process.pid}x${Date.now()}`;
  const parts: Record<PlaywrightEntry, { variables: string; test: string }> = {
    main: { variables: '{ SECRET_TOKEN: "${env:E2E_PW_SECRET}" }', test: 'grep: "@main", environments: [main], workers: 2' },
    flaky: { variables: '{}', test: 'grep: "@flaky", environments: [flaky], retries: 1' },
    live: { variables: `{ RELEASE_FILE: "${releaseFile}" }`, test: 'grep: "@live", environments: [live], workers: 1' },
    hang: { variables: `{ PID_FILE: "${pidFile}", BROWSER_MARKER: "${marker}" }`, test: 'grep: "@hang", environments: [hang], workers: 1, timeoutSeconds: 3' },
    reload: { variables: '{}', test: 'grep: "@reload", environments: [reload]' },
  };
  const config = [
    'environments:',
    ...entries.map((e) => `  ${e}: { variables: ${parts[e].variables} }`),
    'tests:',
    ...entries.map((e) => `  - { name: ${e}, type: playwright, dir: suite, ${parts[e].test} }`),
    '',
  ].join('\n');
  return { dir, suiteDir, releaseFile, pidFile, marker, config };
}

/** A one-project Playwright suite in `dir`/suite whose only spec file, tests/shop.spec.ts, is `spec`. */
export function writeShopSuite(dir: string, spec: string): void {
  mkdirSync(path.join(dir, 'suite', 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'suite', 'playwright.config.ts'), "export default { testDir: 'tests', projects: [{ name: 'chromium' }] };\n");
  writeFileSync(path.join(dir, 'suite', 'tests', 'shop.spec.ts'), spec);
}
