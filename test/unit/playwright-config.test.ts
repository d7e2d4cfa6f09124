/**
 * `type: playwright` in runset.config.yaml, and the config runset hands
 * Playwright: the suite's own, with paths made absolute, the system Chromium,
 * and failure artifacts on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, parseSuiteConfig } from '../../src/config/suite.js';
import { wrapConfig } from '../../src/executors/playwright/wrap-config.cjs';
import { isModuleFile } from '../../src/executors/playwright/index.js';
import { webServerPortsOf } from '../../src/config/playwright-discovery.js';
import { browserProblem } from '../../src/executors/playwright/chromium.js';
import type { PlaywrightTestSpec } from '../../src/core/types.js';
import { tempDir } from '../helpers/server.js';

const ENVS = 'environments:\n  staging: { variables: {} }\ntests:\n';
const chromium = { executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] };

function suiteDir(): string {
  const dir = tempDir('runset-pwconfig-');
  mkdirSync(path.join(dir, 'e2e'));
  writeFileSync(path.join(dir, 'e2e', 'playwright.config.ts'), 'export default {};\n');
  return dir;
}

function configError(text: string, dir: string): ConfigError {
  try {
    parseSuiteConfig(ENVS + text, path.join(dir, 'runset.config.yaml'));
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

test('a playwright entry: dir resolved, config file found, overrides only when given', () => {
  const dir = suiteDir();
  const suite = parseSuiteConfig(`${ENVS}  - { name: e2e, type: playwright, dir: e2e, grep: "@smoke", workers: 2, retries: 1 }\n`, path.join(dir, 'runset.config.yaml'));
  const spec = suite.tests[0] as PlaywrightTestSpec;
  assert.equal(spec.type, 'playwright');
  assert.equal(spec.dir, path.join(dir, 'e2e'));
  assert.equal(spec.config, path.join(dir, 'e2e', 'playwright.config.ts'));
  assert.equal(spec.grep, '@smoke');
  assert.equal(spec.workers, 2);
  assert.equal(spec.retriesOverride, true);
  assert.equal(spec.timeoutOverride, false, 'the suite keeps its own timeout');
  assert.equal(spec.case, undefined, 'cases come from discovery');
});

test('playwright entry errors say where and what is expected', () => {
  const dir = suiteDir();
  assert.match(configError('  - { name: x, type: playwright }\n', dir).message, /tests\[0\]\.dir: missing/);
  assert.match(configError('  - { name: x, type: playwright, dir: nope }\n', dir).message, /tests\[0\]\.dir: "nope" is not a folder/);
  mkdirSync(path.join(dir, 'empty'));
  assert.match(configError('  - { name: x, type: playwright, dir: empty }\n', dir).message, /no playwright\.config\.\* in .*; expected a folder holding one of playwright\.config\.ts/);
  assert.match(configError('  - { name: x, type: playwright, dir: e2e, grep: "(" }\n', dir).message, /tests\[0\]\.grep: "\(" is not a valid regular expression/);
  assert.match(configError('  - { name: x, type: playwright, dir: e2e, workers: 0 }\n', dir).message, /tests\[0\]\.workers/);
  assert.match(configError('  - { name: x, type: playwright, dir: e2e, run: [x] }\n', dir).message, /tests\[0\]/);
});

test('wrapConfig: paths relative to the suite become absolute, as Playwright would resolve them', () => {
  const dir = suiteDir();
  writeFileSync(path.join(dir, 'setup.ts'), '');
  const out = wrapConfig(
    { default: { testDir: 'tests', snapshotDir: 'snaps', globalSetup: './setup.ts', tsconfig: 'tsconfig.e2e.json', webServer: { command: 'npm start', cwd: 'app' } } },
    { configDir: dir, chromium },
  );
  assert.equal(out.testDir, path.join(dir, 'tests'));
  assert.equal(out.snapshotDir, path.join(dir, 'snaps'));
  assert.equal(out.globalSetup, path.join(dir, 'setup.ts'));
  assert.equal(out.tsconfig, path.join(dir, 'tsconfig.e2e.json'));
  assert.deepEqual(out.webServer, { command: 'npm start', cwd: path.join(dir, 'app') });
  assert.equal(out.respectGitIgnore, false, 'as before: a given testDir does not respect .gitignore');
  const bare = wrapConfig({}, { configDir: dir, chromium });
  assert.equal(bare.testDir, dir);
  assert.equal(bare.respectGitIgnore, true, 'as before: no testDir respects .gitignore');
});

test('wrapConfig: system Chromium for Chromium projects, headless, failure artifacts kept', () => {
  const out = wrapConfig(
    {
      use: { trace: 'on-first-retry', launchOptions: { slowMo: 5, args: ['--lang=fr'] }, video: 'retain-on-failure' },
      projects: [
        { name: 'chromium', use: { defaultBrowserType: 'chromium', channel: 'chrome', headless: false } },
        { name: 'firefox', use: { browserName: 'firefox' } },
        { name: 'keeps', use: { trace: { mode: 'on', snapshots: true }, screenshot: 'on' } },
      ],
    },
    { configDir: '/suite', chromium },
  );
  const [chrome, firefox, keeps] = out.projects as Array<{ use: Record<string, unknown> }>;
  assert.deepEqual(chrome!.use.launchOptions, { slowMo: 5, args: ['--lang=fr', '--no-sandbox'], executablePath: '/usr/bin/chromium' });
  assert.equal(chrome!.use.channel, undefined);
  assert.equal(chrome!.use.headless, true);
  assert.deepEqual(chrome!.use.trace, { screenshots: false, mode: 'retain-on-failure' }, 'traced, without the costly screencast');
  assert.equal(chrome!.use.screenshot, 'only-on-failure');
  assert.equal(firefox!.use.launchOptions, undefined, 'other browsers are left to Playwright');
  assert.deepEqual(keeps!.use.trace, { mode: 'on', snapshots: true }, 'a suite that keeps more keeps its choice');
  assert.equal(keeps!.use.screenshot, 'on');
  assert.equal((out.use as Record<string, unknown>).video, 'retain-on-failure', 'video as the suite asks');
});

test('module detection follows Playwright: extension first, then the nearest package.json', () => {
  const dir = tempDir('runset-module-');
  assert.equal(isModuleFile(path.join(dir, 'playwright.config.mjs')), true);
  assert.equal(isModuleFile(path.join(dir, 'playwright.config.cts')), false);
  writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
  assert.equal(isModuleFile(path.join(dir, 'playwright.config.ts')), true);
  writeFileSync(path.join(dir, 'package.json'), '{}');
  assert.equal(isModuleFile(path.join(dir, 'playwright.config.ts')), false);
});

test('a missing browser is named, with what to do', () => {
  assert.match(browserProblem('/nowhere/chromium') ?? '', /^Chromium not found at \/nowhere\/chromium; .*RUNSET_CHROMIUM/);
  assert.match(browserProblem('/') ?? '', /is not a file/);
});

test("discovery: a webServer's fixed port is its `port`, else its url's (80/443 when the url names none)", () => {
  assert.deepEqual(webServerPortsOf({ command: 'npm start', port: 8274 }), [8274]);
  assert.deepEqual(webServerPortsOf({ command: 'npm start', url: 'http://127.0.0.1:3000/health', port: 0 }), [3000]);
  assert.deepEqual(webServerPortsOf({ command: 'npm start', url: 'https://localhost/' }), [443]);
  assert.deepEqual(webServerPortsOf({ command: 'npm start', url: 'http://localhost' }), [80]);
  assert.deepEqual(webServerPortsOf({ command: 'npm start', url: 'not a url' }), []);
  assert.deepEqual(webServerPortsOf(null), [], 'no webServer, or a list of them (Playwright lists those as null)');
});
