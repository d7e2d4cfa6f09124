/**
 * A Playwright suite shaped like a real one with a `webServer` on a fixed
 * port: a small node server that takes `startMs` to listen, tests in several
 * files that open its page in Chromium or call it, of uneven lengths. Used by
 * the webServer tests (test/e2e/playwright-webserver.test.ts) and
 * bench:playwright.
 *
 * The server logs `start|listening|stop <pid> <ms since epoch>` to `serverLog`
 * (a collision would log `error:EADDRINUSE`), and every test appends
 * `<file> › <title> <Playwright runner pid>` to `marker`, so what ran where is
 * counted from what really ran.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { CHROMIUM_ARGS, DEFAULT_CHROMIUM } from '../../src/executors/playwright/chromium.js';

export const PLAYWRIGHT_CLI = path.join(path.dirname(createRequire(import.meta.url).resolve('@playwright/test/package.json')), 'cli.js');
/** NODE_PATH for running the suite directly: it has no node_modules of its own (runset lends it its Playwright the same way). */
export const MODULES = path.resolve(path.dirname(PLAYWRIGHT_CLI), '..', '..');

export interface WebServerSuiteOptions {
  files: number;
  /** Tests in all, spread over the files. */
  tests: number;
  /** How long the server takes to listen. */
  startMs: number;
  /** Each test's own wait (ms), by its index. */
  waitMs(i: number): number;
  /** Tests (by index) that open the page in Chromium; the others call the server with Playwright's request fixture. */
  usesPage(i: number): boolean;
  /** Tests (by index) that fail on purpose. */
  fails?(i: number): boolean;
  /** The config's `workers` (the suite's own choice, as Playwright reads it). */
  workers: number;
}

export interface WebServerSuite {
  dir: string;
  port: number;
  serverLog: string;
  marker: string;
}

/** A TCP port free now (the OS picks it), so parallel test runs on one machine do not meet. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export async function writeWebServerSuite(root: string, opts: WebServerSuiteOptions): Promise<WebServerSuite> {
  const dir = path.join(root, 'suite');
  const port = await freePort();
  const serverLog = path.join(root, 'server.log');
  const marker = path.join(root, 'ran.log');
  writeFileSync(serverLog, '');
  writeFileSync(marker, '');
  mkdirSync(path.join(dir, 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), '{"name":"webserver-suite","private":true}\n');
  writeFileSync(path.join(dir, 'server.js'), `
const fs = require('node:fs');
const http = require('node:http');
const log = (what) => fs.appendFileSync(${JSON.stringify(serverLog)}, what + ' ' + process.pid + ' ' + Date.now() + '\\n');
log('start');
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end('<!doctype html><title>shop</title><h1>Shop</h1><p role="status">open</p>');
});
server.on('error', (err) => { log('error:' + err.code); process.exit(1); });
setTimeout(() => server.listen(${port}, () => log('listening')), ${opts.startMs});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => { log('stop'); process.exit(0); });
`);
  writeFileSync(path.join(dir, 'playwright.config.js'), `
module.exports = {
  testDir: 'tests',
  workers: ${opts.workers},
  reporter: 'list',
  use: {
    baseURL: 'http://127.0.0.1:${port}',
    launchOptions: { executablePath: ${JSON.stringify(process.env.RUNSET_CHROMIUM || DEFAULT_CHROMIUM)}, args: ${JSON.stringify(CHROMIUM_ARGS)} },
  },
  // SIGTERM, so the server logs its stop; a port, as most suites give.
  webServer: { command: 'node server.js', port: ${port}, reuseExistingServer: false, timeout: 60000, gracefulShutdown: { signal: 'SIGTERM', timeout: 5000 } },
};
`);
  const perFile = Math.ceil(opts.tests / opts.files);
  for (let f = 0; f < opts.files; f++) {
    const tests: string[] = [];
    for (let i = f * perFile; i < Math.min(opts.tests, (f + 1) * perFile); i++) {
      const expected = opts.fails?.(i) ? 'closed' : 'open';
      const mark = `require('node:fs').appendFileSync(${JSON.stringify(marker)}, 'file${f}.spec.js › test ${i} ' + process.ppid + '\\n');`;
      const body = opts.usesPage(i)
        ? `await page.goto('/');\n  await expect(page.getByRole('status')).toHaveText('${expected}');`
        : `const res = await request.get('/');\n  expect(await res.text()).toContain('>${expected}<');`;
      tests.push(`test('test ${i}', async ({ ${opts.usesPage(i) ? 'page' : 'request'} }) => {\n  ${mark}\n  await new Promise((r) => setTimeout(r, ${opts.waitMs(i)}));\n  ${body}\n});`);
    }
    writeFileSync(path.join(dir, 'tests', `file${f}.spec.js`), `const { test, expect } = require('@playwright/test');\n${tests.join('\n')}\n`);
  }
  return { dir, port, serverLog, marker };
}

/** One run of the server, from its log: when it started and stopped (undefined: no stop logged), and any error. */
export interface ServerRun {
  pid: number;
  start: number;
  stop: number | undefined;
  errors: string[];
}

export function serverRuns(serverLog: string): ServerRun[] {
  const runs = new Map<number, ServerRun>();
  for (const line of readFileSync(serverLog, 'utf8').split('\n').filter(Boolean)) {
    const [what, pid, at] = line.split(' ') as [string, string, string];
    const run = runs.get(Number(pid)) ?? { pid: Number(pid), start: Number(at), stop: undefined, errors: [] };
    if (what === 'stop') run.stop = Number(at);
    if (what.startsWith('error')) run.errors.push(what);
    runs.set(run.pid, run);
  }
  return [...runs.values()].sort((a, b) => a.start - b.start);
}

/** Pairs of server runs whose lives overlapped (a run with no stop logged overlaps everything after it). */
export function overlaps(runs: readonly ServerRun[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  runs.forEach((a, i) => runs.slice(i + 1).forEach((b) => {
    if (b.start < (a.stop ?? Infinity) && a.start < (b.stop ?? Infinity)) out.push([a.pid, b.pid]);
  }));
  return out;
}

/** Each marker line's test name, and the distinct Playwright runners that ran tests. */
export function ranTests(marker: string): { names: string[]; runners: Set<string> } {
  const lines = readFileSync(marker, 'utf8').split('\n').filter(Boolean);
  return { names: lines.map((l) => l.slice(0, l.lastIndexOf(' '))), runners: new Set(lines.map((l) => l.slice(l.lastIndexOf(' ') + 1))) };
}

/** `playwright test` run directly in the suite (same Chromium): each test's outcome by runset's member name, and the wall time. */
export async function runDirectly(suiteDir: string, workers?: number): Promise<{ outcomes: Map<string, 'SUCCESS' | 'FAIL'>; wallMs: number }> {
  const started = performance.now();
  const args = [PLAYWRIGHT_CLI, 'test', '--reporter=json', ...(workers === undefined ? [] : [`--workers=${workers}`])];
  const child = spawn(process.execPath, args, { cwd: suiteDir, env: { ...process.env, NODE_PATH: MODULES }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise((resolve) => child.on('exit', resolve));
  const wallMs = performance.now() - started;
  interface Suite { title: string; specs?: Array<{ title: string; tests: Array<{ status: string }> }>; suites?: Suite[] }
  let report: { suites: Suite[] };
  try {
    report = JSON.parse(out.slice(out.indexOf('{'))) as { suites: Suite[] };
  } catch {
    throw new Error(`playwright test gave no JSON report: ${err}`);
  }
  const outcomes = new Map<string, 'SUCCESS' | 'FAIL'>();
  const walk = (suite: Suite, titles: string[]) => {
    for (const spec of suite.specs ?? []) {
      const ok = spec.tests.every((t) => t.status === 'expected' || t.status === 'skipped' || t.status === 'flaky');
      outcomes.set([...titles, spec.title].join(' › '), ok ? 'SUCCESS' : 'FAIL');
    }
    for (const child of suite.suites ?? []) walk(child, [...titles, child.title]);
  };
  for (const file of report.suites) walk(file, [file.title]);
  return { outcomes, wallMs };
}
