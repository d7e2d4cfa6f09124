/**
 * `type: playwright` in runset.config.yaml, and the config runset hands
 * Playwright: the suite's own, with paths made absolute, the system Chromium,
 * and failure artifacts on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, parseSuiteConfig } from '../../src/config/suite.js';
import { wrapConfig } from '../../src/executors/playwright/wrap-config.cjs';
import { isModuleFile } from '../../src/executors/playwright/index.js';
import { webServerPortsOf } from '../../src/config/playwright-discovery.js';
import { browserProblem } from '../../src/executors/playwright/chromium.js';
import { ffmpegPath, missingFfmpeg } from '../../src/executors/playwright/ffmpeg.js';
import type { PlaywrightTestSpec } from '../../src/core/types.js';
import { REPO_ROOT, tempDir } from '../helpers/server.js';

const ENVS = 'environments:\n  staging: { variables: {} }\ntests:\n';
const PLAYWRIGHT_CLI = path.join(REPO_ROOT, 'node_modules', '@playwright', 'test', 'cli.js');
/** The operator's Chromium, so these tests do not depend on which browsers this machine has (test/e2e/playwright-browser.test.ts covers the choice). */
const chromium = { explicit: { path: '/usr/bin/chromium' }, system: { path: '/usr/bin/chromium' }, rootArgs: ['--no-sandbox'], cli: PLAYWRIGHT_CLI };
const asRoot = process.getuid?.() === 0;

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

test("wrapConfig: the operator's Chromium for Chromium projects, headless, failure artifacts kept", () => {
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
  assert.deepEqual(chrome!.use.launchOptions, { slowMo: 5, args: ['--lang=fr', ...(asRoot ? ['--no-sandbox'] : [])], executablePath: '/usr/bin/chromium', channel: undefined });
  assert.equal(chrome!.use.channel, undefined);
  assert.equal(chrome!.use.headless, true);
  assert.equal(chrome!.use.trace, undefined, "the suite's trace setting (on-first-retry, at the top) stands");
  assert.equal(chrome!.use.screenshot, 'only-on-failure');
  assert.equal(firefox!.use.launchOptions, undefined, 'other browsers are left to Playwright');
  assert.deepEqual(keeps!.use.trace, { mode: 'on', snapshots: true }, 'a suite that keeps more keeps its choice');
  assert.equal(keeps!.use.screenshot, 'on');
  assert.equal((out.use as Record<string, unknown>).video, 'retain-on-failure', 'video as the suite asks');
});

test("wrapConfig: the suite's trace setting, else on-first-retry, which costs a test that passes nothing", () => {
  const traceOf = (config: Record<string, unknown>) => {
    const out = wrapConfig(config, { configDir: '/suite', chromium });
    return [(out.use as Record<string, unknown>).trace, ...((out.projects ?? []) as Array<{ use: Record<string, unknown> }>).map((p) => p.use.trace)];
  };
  assert.deepEqual(traceOf({}), ['on-first-retry']);
  assert.deepEqual(traceOf({ use: { trace: 'off' } }), ['off'], 'a suite that turned tracing off keeps it off');
  assert.deepEqual(traceOf({ use: { trace: 'retain-on-failure' }, projects: [{ name: 'a' }, { name: 'b', use: { trace: 'on' } }] }), ['retain-on-failure', undefined, 'on']);
  assert.deepEqual(traceOf({ projects: [{ name: 'a' }, { name: 'b', use: { trace: { mode: 'off' } } }] }), ['on-first-retry', 'on-first-retry', { mode: 'off' }]);
});

test('wrapConfig: without Playwright\'s ffmpeg, video is off for the run and runset is told once per config load', () => {
  const events = path.join(tempDir('runset-notice-'), 'events.jsonl');
  writeFileSync(events, '');
  const before = process.env.RUNSET_REPORTER_FILE;
  process.env.RUNSET_REPORTER_FILE = events;
  try {
    const missingFfmpeg = '/cache/ms-playwright/ffmpeg-1013/ffmpeg-linux';
    const out = wrapConfig(
      { use: { video: 'retain-on-failure' }, projects: [{ name: 'a' }, { name: 'b', use: { video: { mode: 'on', size: { width: 640, height: 480 } } } }, { name: 'c', use: { video: 'off' } }] },
      { configDir: '/suite', chromium, missingFfmpeg },
    );
    assert.deepEqual([(out.use as Record<string, unknown>).video, ...(out.projects as Array<{ use: Record<string, unknown> }>).map((p) => p.use.video)], ['off', 'off', 'off', 'off']);
    const lines = readFileSync(events, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; text: string; projects: string[] }).filter((l) => !/browser: /.test(l.text));
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.type, 'notice');
    assert.match(lines[0]!.text, /^video is off for this run: .*ffmpeg, which is not at \/cache\/ms-playwright\/ffmpeg-1013\/ffmpeg-linux/);
    assert.deepEqual(lines[0]!.projects, ['a', 'b'], 'the projects whose own effective setting asked: c turned it off itself');

    // The top-level `use` asks, but the only project that runs says off: nothing was turned off for anyone.
    writeFileSync(events, '');
    const notices = () => readFileSync(events, 'utf8').trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { text: string; projects?: string[] }).filter((l) => !/browser: /.test(l.text));
    wrapConfig({ use: { video: 'on' }, projects: [{ name: 'chromium', use: { video: 'off' } }] }, { configDir: '/suite', chromium, missingFfmpeg });
    assert.deepEqual(notices(), []);
    wrapConfig({ use: { video: 'on' } }, { configDir: '/suite', chromium, missingFfmpeg });
    assert.deepEqual(notices()[0]?.projects, [''], 'no projects: the top level is the one, unnamed');

    writeFileSync(events, '');
    const asked = wrapConfig({ use: { video: 'on' } }, { configDir: '/suite', chromium });
    assert.equal((asked.use as Record<string, unknown>).video, 'on', 'with ffmpeg there, video as the suite asks');
    wrapConfig({}, { configDir: '/suite', chromium, missingFfmpeg });
    assert.doesNotMatch(readFileSync(events, 'utf8'), /video/, 'no video asked: nothing to say');
  } finally {
    if (before === undefined) delete process.env.RUNSET_REPORTER_FILE;
    else process.env.RUNSET_REPORTER_FILE = before;
  }
});

test("ffmpeg: where the suite's Playwright looks for it, as its registry computes it", () => {
  const cli = path.join(REPO_ROOT, 'node_modules', '@playwright', 'test', 'cli.js');
  const core = realpathSync(path.join(REPO_ROOT, 'node_modules', 'playwright-core')); // as require resolves it
  const revision = (JSON.parse(readFileSync(path.join(core, 'browsers.json'), 'utf8')) as { browsers: Array<{ name: string; revision: string }> }).browsers.find((b) => b.name === 'ffmpeg')!.revision;
  assert.equal(ffmpegPath(cli, { HOME: '/home/ci' }, '/suite', 'linux'), `/home/ci/.cache/ms-playwright/ffmpeg-${revision}/ffmpeg-linux`);
  assert.equal(ffmpegPath(cli, { HOME: '/h', XDG_CACHE_HOME: '/xdg' }, '/suite', 'linux'), `/xdg/ms-playwright/ffmpeg-${revision}/ffmpeg-linux`);
  assert.equal(ffmpegPath(cli, { PLAYWRIGHT_BROWSERS_PATH: 'browsers' }, '/suite', 'linux'), `/suite/browsers/ffmpeg-${revision}/ffmpeg-linux`);
  assert.equal(ffmpegPath(cli, { PLAYWRIGHT_BROWSERS_PATH: '0' }, '/suite', 'linux'), path.join(core, '.local-browsers', `ffmpeg-${revision}`, 'ffmpeg-linux'));
  assert.equal(ffmpegPath(cli, { HOME: '/Users/me' }, '/suite', 'darwin'), `/Users/me/Library/Caches/ms-playwright/ffmpeg-${revision}/ffmpeg-mac`);

  const registry = tempDir('runset-registry-');
  const env = { PLAYWRIGHT_BROWSERS_PATH: registry };
  assert.equal(missingFfmpeg(cli, env, '/suite'), path.join(registry, `ffmpeg-${revision}`, 'ffmpeg-linux'));
  mkdirSync(path.join(registry, `ffmpeg-${revision}`));
  writeFileSync(path.join(registry, `ffmpeg-${revision}`, 'ffmpeg-linux'), '');
  assert.equal(missingFfmpeg(cli, env, '/suite'), undefined, 'there: Playwright records video');
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
