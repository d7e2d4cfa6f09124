/**
 * A small browser-free Playwright suite for the version matrix, as an ES module
 * package with a TypeScript config (package.json "type": "module",
 * playwright.config.ts) or as a CommonJS one (playwright.config.js with
 * require), with a pass, a failure, skips, a retry that passes (flaky), an
 * expected failure and console output. Its node_modules is a link to one
 * installed @playwright/test version, so it is the suite's own Playwright.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export type ModuleKind = 'esm' | 'cjs';

const BODY = `
test.describe('group', () => {
  test('passes', async () => {
    console.log('hello from passes');
    expect(1 + 1).toBe(2);
  });
  test('fails', async () => {
    expect(1 + 1, 'arithmetic still works').toBe(3);
  });
});
// The two skips below are the subject under test, not tests left out: runset must
// report a Playwright test that skips itself, and one skipped where declared (never
// run, no worker), as skipped. Each prints why: the first in its skip's reason; the
// second in its title, since a declared skip takes no reason before Playwright 1.42,
// and a group-level skip with a reason is run in a worker by newer Playwrights.
test('skips itself', async () => {
  test.skip(true, 'this fixture skips itself on purpose: runset must report it as skipped');
});
test.skip('skipped where declared, on purpose: runset must report a test that never runs as skipped', async () => {});
test('passes on retry', async ({}, testInfo) => {
  expect(testInfo.retry, 'the first attempt fails').toBeGreaterThan(0);
});
test('is expected to fail', async () => {
  test.fail();
  expect(true).toBe(false);
});
`;

const CONFIG_BODY = `{ testDir: 'tests', retries: 1, workers: 2, reporter: 'list' }`;

/**
 * Writes the suite into `dir` (its spec file named after `tag`, so names stay
 * unique across suites) linked to `modules`; without `modules` it has no
 * Playwright of its own, and runset lends it its own.
 */
export function writeCompatSuite(dir: string, kind: ModuleKind, tag: string, modules: string | undefined): void {
  mkdirSync(path.join(dir, 'tests'), { recursive: true });
  if (modules !== undefined) symlinkSync(modules, path.join(dir, 'node_modules'), 'dir');
  if (kind === 'esm') {
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `compat-${tag}`, private: true, type: 'module' }));
    writeFileSync(path.join(dir, 'playwright.config.ts'), `import { defineConfig } from '@playwright/test';\nexport default defineConfig(${CONFIG_BODY});\n`);
    writeFileSync(path.join(dir, 'tests', `${tag}.spec.ts`), `import { test, expect } from '@playwright/test';\n${BODY}`);
  } else {
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `compat-${tag}`, private: true }));
    writeFileSync(path.join(dir, 'playwright.config.js'), `const { defineConfig } = require('@playwright/test');\nmodule.exports = defineConfig(${CONFIG_BODY});\n`);
    writeFileSync(path.join(dir, 'tests', `${tag}.spec.js`), `const { test, expect } = require('@playwright/test');\n${BODY}`);
  }
}

/** One case as Playwright reports it when run directly. */
export interface DirectCase {
  name: string;
  status: 'expected' | 'unexpected' | 'flaky' | 'skipped';
  attempts: number;
  /** The first line of its first error, colours removed. */
  error: string | null;
}

interface JsonSuite {
  title: string;
  specs?: Array<{ title: string; file: string; tests: Array<{ status: DirectCase['status']; results: Array<{ error?: { message?: string } }> }> }>;
  suites?: JsonSuite[];
}

/** Runs the suite with `playwright test --reporter=json` (no runset involved) and returns its cases by name. */
export function runDirectly(dir: string, cli: string): Map<string, DirectCase> {
  const res = spawnSync(process.execPath, [cli, 'test', '--reporter=json'], { cwd: dir, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
  let report: { suites?: JsonSuite[] };
  try {
    report = JSON.parse(res.stdout.slice(res.stdout.indexOf('{'))) as { suites?: JsonSuite[] };
  } catch {
    throw new Error(`the direct run in ${dir} gave no JSON report (exit ${res.status}): ${res.stderr}`);
  }
  const cases = new Map<string, DirectCase>();
  const walk = (suite: JsonSuite, titles: string[]): void => {
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests) {
        const name = [spec.file, ...titles, spec.title].join(' › ');
        const message = t.results.find((r) => r.error?.message)?.error?.message;
        // eslint-disable-next-line no-control-regex -- terminal colour codes begin with ESC
        const error = message ? (message.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '').split('\n')[0] ?? '').trim() : null;
        cases.set(name, { name, status: t.status, attempts: t.results.length, error });
      }
    }
    for (const child of suite.suites ?? []) walk(child, [...titles, child.title]);
  };
  for (const fileSuite of report.suites ?? []) walk(fileSuite, []);
  return cases;
}
