/**
 * bench:playwright — a set of N Playwright specs through runset, against the
 * same specs with one `npx playwright test --workers=W`, alternated round by
 * round on the same machine, same system Chromium. Budget (bench/README.md): runset's
 * wall time ≤ 1.25 × Playwright's alone.
 *
 * runset's time runs from the create request to the poll that sees SUCCESS (what
 * a CI job waits); Playwright's from spawn to exit. Each spec opens a page from a
 * local server, fills a form and checks the answer: real browser work, no network.
 *
 * BENCH_SPECS (20), BENCH_WORKERS (2), BENCH_ROUNDS (3). BENCH_CASE: `forms` (this
 * one), `webserver` (./playwright-webserver.ts: a suite with a slow webServer on
 * a fixed port, on one worker), or both (the default).
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { tempDir } from '../test/helpers/server.js';
import { newToken } from '../src/auth/keys.js';
import { CHROMIUM_ARGS, DEFAULT_CHROMIUM, browserProblem } from '../src/executors/playwright/chromium.js';
import { webServerCase } from './playwright-webserver.js';
import { runsetRound, startServe } from './runset-serve.js';

const SPECS = Number(process.env.BENCH_SPECS ?? 20);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CHROMIUM = process.env.RUNSET_CHROMIUM || DEFAULT_CHROMIUM;
const PLAYWRIGHT_CLI = path.join(path.dirname(createRequire(import.meta.url).resolve('@playwright/test/package.json')), 'cli.js');
const MODULES = path.resolve(path.dirname(PLAYWRIGHT_CLI), '..', '..');

const PAGE = `<!doctype html><title>bench</title><h1>Order</h1>
<form><label>Name <input name="name"></label><button>Send</button></form><p role="status"></p>
<script>document.querySelector('form').onsubmit = (e) => { e.preventDefault();
  document.querySelector('[role=status]').textContent = 'Thanks ' + new FormData(e.target).get('name'); };</script>`;

/** The suite as a user would have it: it already points Playwright at the system Chromium. */
function writeSuite(dir: string): void {
  mkdirSync(path.join(dir, 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'playwright.config.ts'), `
import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: 'tests',
  use: { launchOptions: { executablePath: ${JSON.stringify(CHROMIUM)}, args: ${JSON.stringify(CHROMIUM_ARGS)} } },
});
`);
  for (let i = 0; i < SPECS; i++) {
    writeFileSync(path.join(dir, 'tests', `spec${String(i).padStart(2, '0')}.spec.ts`), `
import { test, expect } from '@playwright/test';
test('order ${i}', async ({ page }) => {
  await page.goto(process.env.BASE_URL!);
  await page.getByLabel('Name').fill('customer ${i}');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByRole('status')).toHaveText('Thanks customer ${i}');
});
`);
  }
}

function startPageServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    resolve({ server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/` });
  }));
}

function playwrightRound(suiteDir: string, baseUrl: string): Promise<number> {
  const started = performance.now();
  // What `npx playwright test --workers=W` runs; NODE_PATH because the suite has no node_modules of its own.
  const child = spawn(process.execPath, [PLAYWRIGHT_CLI, 'test', `--workers=${WORKERS}`, '--reporter=dot'], {
    cwd: suiteDir, env: { ...process.env, BASE_URL: baseUrl, NODE_PATH: MODULES }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`playwright test exited ${code}: ${err}`)))));
}

/** The forms case: N spec files through `serve --workers W` against one `playwright test --workers=W`. */
async function formsCase(): Promise<void> {
  const dir = tempDir('runset-bench-pw-');
  const suiteDir = path.join(dir, 'suite');
  writeSuite(suiteDir);
  const page = await startPageServer();
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, `environments:\n  bench: { variables: { BASE_URL: "${page.url}" } }\ntests:\n  - { name: bench, type: playwright, dir: suite, workers: ${WORKERS} }\n`);
  const key = newToken();
  const runset = await startServe(configPath, path.join(dir, 'data'), key, WORKERS, { RUNSET_CHROMIUM: CHROMIUM });
  console.log(`bench:playwright — ${cpus().length} cores, ${cpus()[0]?.model ?? '?'}, node ${process.version}, ${SPECS} specs, workers ${WORKERS}, Chromium ${CHROMIUM}`);
  const times = { runset: [] as number[], playwright: [] as number[] };
  try {
    await playwrightRound(suiteDir, page.url); // warm-up: Playwright's compile cache, the page cache of Chromium's files
    await runsetRound(runset.url, key);
    for (let i = 0; i < ROUNDS; i++) {
      times.playwright.push(await playwrightRound(suiteDir, page.url));
      times.runset.push(await runsetRound(runset.url, key));
      console.log(`round ${i + 1}: playwright test ${(times.playwright[i]! / 1000).toFixed(2)} s | runset ${(times.runset[i]! / 1000).toFixed(2)} s`);
    }
  } finally {
    runset.proc.kill('SIGTERM');
    page.server.close();
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const ratio = mean(times.runset) / mean(times.playwright);
  console.log(`mean: playwright test ${(mean(times.playwright) / 1000).toFixed(2)} s, runset ${(mean(times.runset) / 1000).toFixed(2)} s`);
  // The median round resists a neighbour's burst of load better than the mean; the budget is judged on the mean.
  console.log(`median: playwright test ${(median(times.playwright) / 1000).toFixed(2)} s, runset ${(median(times.runset) / 1000).toFixed(2)} s, ratio ${(median(times.runset) / median(times.playwright)).toFixed(2)}`);
  console.log(`runset/playwright wall-time ratio: ${ratio.toFixed(2)} (budget ≤ 1.25) ${ratio <= 1.25 ? 'OK' : 'OVER BUDGET'}`);
}

const problem = browserProblem(CHROMIUM);
if (problem) {
  console.log(`bench:playwright skipped: ${problem}`);
  process.exit(0);
}
const CASE = process.env.BENCH_CASE ?? 'all';
if (CASE !== 'webserver') await formsCase();
if (CASE !== 'forms' && !(await webServerCase())) process.exitCode = 1;
