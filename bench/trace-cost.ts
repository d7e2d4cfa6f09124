/**
 * bench:trace — what runset's wrapped config costs tests that pass. One suite of
 * N passing browser tests (a page set with a form, the form filled, the answer
 * checked), run three ways with the same Playwright and system Chromium,
 * alternated round by round:
 *
 * - direct: `playwright test` with the suite's own config (no trace setting);
 * - runset: the config runset generates for a batch (wrap-config.cts): the
 *   suite's trace setting, else `on-first-retry`;
 * - traced: the same wrapper over a suite tracing every test as runset used to
 *   (`retain-on-failure` without the screencast), for comparison.
 *
 * The figure is the sum of the tests' own durations (Playwright's JSON report),
 * so Playwright's and the browser's start-up, the same every way, are left out.
 *
 * BENCH_SPECS (30), BENCH_ROUNDS (3), BENCH_WORKERS (1).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../test/helpers/server.js';
import { CHROMIUM_ARGS, DEFAULT_CHROMIUM, browserProblem } from '../src/executors/playwright/chromium.js';
import type { WrapOptions } from '../src/executors/playwright/wrap-config.cjs';

const SPECS = Number(process.env.BENCH_SPECS ?? 30);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
const CHROMIUM = process.env.RUNSET_CHROMIUM || DEFAULT_CHROMIUM;
const PLAYWRIGHT_CLI = path.join(path.dirname(createRequire(import.meta.url).resolve('@playwright/test/package.json')), 'cli.js');
const MODULES = path.resolve(path.dirname(PLAYWRIGHT_CLI), '..', '..');
const WRAP_CONFIG = fileURLToPath(new URL('../src/executors/playwright/wrap-config.cjs', import.meta.url));

const PAGE = `<!doctype html><title>bench</title><h1>Order</h1>
<form><label>Name <input name="name"></label><button>Send</button></form><p role="status"></p>
<script>document.querySelector('form').onsubmit = (e) => { e.preventDefault();
  document.querySelector('[role=status]').textContent = 'Thanks ' + new FormData(e.target).get('name'); };</script>`;

type Way = 'direct' | 'runset' | 'traced';

/** A CommonJS suite pointing Playwright at the system Chromium itself, so the direct run needs no wrapper. */
function writeSuite(dir: string, trace: unknown): void {
  mkdirSync(path.join(dir, 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), '{"private":true}');
  const use = { ...(trace === undefined ? {} : { trace }), launchOptions: { executablePath: CHROMIUM, args: CHROMIUM_ARGS } };
  writeFileSync(path.join(dir, 'playwright.config.js'), `module.exports = { testDir: 'tests', workers: ${WORKERS}, use: ${JSON.stringify(use)} };\n`);
  for (let i = 0; i < SPECS; i++) {
    writeFileSync(path.join(dir, 'tests', `order${String(i).padStart(2, '0')}.spec.js`), `const { test, expect } = require('@playwright/test');
test('order ${i}', async ({ page }) => {
  await page.setContent(${JSON.stringify(PAGE)});
  await page.getByLabel('Name').fill('customer ${i}');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByRole('status')).toHaveText('Thanks customer ${i}');
});
`);
  }
}

/** As the executor writes it for a batch (src/executors/playwright/index.ts). */
function writeWrapper(dir: string): string {
  const options: WrapOptions = { configDir: dir, chromium: { explicit: { path: CHROMIUM }, system: { path: CHROMIUM }, rootArgs: [...CHROMIUM_ARGS], cli: PLAYWRIGHT_CLI } };
  const file = path.join(dir, 'playwright.runset.config.cjs');
  writeFileSync(file, `const { wrapConfig } = require(${JSON.stringify(WRAP_CONFIG)});
module.exports = wrapConfig(require(${JSON.stringify(path.join(dir, 'playwright.config.js'))}), ${JSON.stringify(options)});\n`);
  return file;
}

interface Report {
  suites?: Array<{ specs?: Array<{ tests: Array<{ results: Array<{ status: string; duration: number; error?: { message?: string } }> }> }> }>;
}

/** Runs one way; the sum of the tests' durations (ms), after checking every test passed. */
function runOnce(dir: string, config: string): number {
  const res = spawnSync(process.execPath, [PLAYWRIGHT_CLI, 'test', '-c', config, '--reporter=json', '--output', path.join(dir, 'out')], {
    cwd: dir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NODE_PATH: MODULES },
  });
  const report = JSON.parse(res.stdout.slice(res.stdout.indexOf('{'))) as Report;
  const results = (report.suites ?? []).flatMap((s) => s.specs ?? []).flatMap((s) => s.tests).flatMap((t) => t.results);
  if (results.length !== SPECS || results.some((r) => r.status !== 'passed')) throw new Error(`not every test passed in ${dir}: ${JSON.stringify(results.slice(0, 2))} ${res.stderr}`);
  return results.reduce((sum, r) => sum + r.duration, 0);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;

function main(): void {
  const problem = browserProblem(CHROMIUM);
  if (problem) throw new Error(problem);
  const root = tempDir('runset-bench-trace-');
  const plain = path.join(root, 'plain');
  const traced = path.join(root, 'traced');
  writeSuite(plain, undefined);
  writeSuite(traced, { mode: 'retain-on-failure', screenshots: false });
  const configs: Record<Way, [string, string]> = {
    direct: [plain, path.join(plain, 'playwright.config.js')],
    runset: [plain, writeWrapper(plain)],
    traced: [traced, writeWrapper(traced)],
  };
  const times: Record<Way, number[]> = { direct: [], runset: [], traced: [] };
  for (const way of Object.keys(configs) as Way[]) runOnce(...configs[way]); // warm-up
  for (let round = 1; round <= ROUNDS; round++) {
    const line: string[] = [];
    for (const way of Object.keys(configs) as Way[]) {
      const ms = runOnce(...configs[way]);
      times[way].push(ms);
      line.push(`${way} ${ms} ms`);
    }
    console.log(`round ${round}: ${line.join(', ')}`);
  }
  const base = median(times.direct);
  for (const way of Object.keys(times) as Way[]) {
    console.log(`${way.padEnd(7)} median ${median(times[way])} ms for ${SPECS} tests, ${(median(times[way]) / base).toFixed(3)} × direct`);
  }
}

main();
