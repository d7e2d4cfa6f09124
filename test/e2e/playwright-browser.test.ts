/**
 * Which browser a Chromium project runs on, through a real runset and a real
 * Playwright run: what `npx playwright test` would launch (Playwright's managed
 * headless shell, simulated here by a PLAYWRIGHT_BROWSERS_PATH whose expected
 * executable is a link to Debian's Chromium binary), else the system Chromium
 * with a notice; RUNSET_CHROMIUM wins; a suite's own executablePath is kept.
 * Every member names the browser and version that ran. The three servers run
 * at once, each on a suite folder of its own.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, REPO_ROOT, startRunset, tempDir, waitForSet } from '../helpers/server.js';
import { chromiumMissing, type PlaywrightMember } from './playwright-fixtures.js';

after(() => assertNoLeakedServers());

/** Debian's Chromium binary (/usr/bin/chromium is a wrapper script). */
const CHROMIUM_BINARY = '/usr/lib/chromium/chromium';
const skip = chromiumMissing() || (existsSync(CHROMIUM_BINARY) ? false : `no ${CHROMIUM_BINARY}`);

function writeSuite(root: string, name: string, use: string): void {
  const suite = path.join(root, name);
  mkdirSync(path.join(suite, 'tests'), { recursive: true });
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(suite, 'node_modules'), 'dir');
  writeFileSync(path.join(suite, 'package.json'), '{"private":true}');
  writeFileSync(path.join(suite, 'playwright.config.js'), `module.exports = { testDir: 'tests', workers: 1, use: ${use} };\n`);
  writeFileSync(path.join(suite, 'tests', 'page.spec.js'), `const { test, expect } = require('@playwright/test');
test('shows a title', async ({ page, browser }) => {
  await page.setContent('<h1>Shop</h1>');
  await expect(page.locator('h1')).toHaveText('Shop');
  console.log('launched ' + browser.version());
});
`);
}

/** Two entries: one leaves the browser to Playwright (asking for Chrome, like many suites), one names its own executable. */
function writeConfig(): string {
  const dir = tempDir('runset-pw-browser-');
  writeSuite(dir, 'plain', `{ channel: undefined }`);
  writeSuite(dir, 'own', `{ launchOptions: { executablePath: ${JSON.stringify(CHROMIUM_BINARY)}, args: ['--no-sandbox'] } }`);
  writeFileSync(path.join(dir, 'runset.config.yaml'), 'environments:\n  local: { variables: {} }\ntests:\n  - { name: plain, type: playwright, dir: plain }\n  - { name: own, type: playwright, dir: own }\n');
  return dir;
}

/** Where runset's Playwright expects its headless shell under `browsers` (asked of its own registry, so any layout is right). */
function managedHeadlessShell(browsers: string): { path: string; version: string } {
  const script = `const { registry } = require('playwright-core/lib/coreBundle').registry;
const e = registry.findExecutable('chromium-headless-shell');
process.stdout.write(JSON.stringify({ path: e.executablePath('javascript'), version: e.browserVersion }));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: REPO_ROOT, env: { ...process.env, PLAYWRIGHT_BROWSERS_PATH: browsers }, encoding: 'utf8' })) as { path: string; version: string };
}

async function runSet(dir: string, env: Record<string, string>): Promise<Map<string, PlaywrightMember>> {
  const server = await startRunset({ configPath: path.join(dir, 'runset.config.yaml'), env, args: ['--workers', '1'] });
  try {
    const id = (await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'local' } })).body.testRunSetId as string;
    await waitForSet(server, id, 120_000);
    const members = (await api<{ testRuns: PlaywrightMember[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
    for (const m of members) assert.equal(m.status, 'SUCCESS', JSON.stringify(m));
    return new Map(members.map((m) => [m.name, m]));
  } finally {
    await server.stop();
  }
}

function outputOf(members: Map<string, PlaywrightMember>, entry: string): string {
  // Both entries have a case of one name, so each case is named after its entry first.
  const member = members.get(`${entry} › page.spec.js › shows a title`);
  assert.ok(member, `a member of ${entry}`);
  return member.output ?? '';
}

describe('which browser runs (each case its own servers, all at once)', { concurrency: true }, () => {
  test('managed browser absent: the system Chromium runs, and each member says so and names it', { skip, timeout: 180_000 }, async () => {
    const dir = writeConfig();
    mkdirSync(path.join(dir, 'no-browsers'));
    const members = await runSet(dir, { PLAYWRIGHT_BROWSERS_PATH: path.join(dir, 'no-browsers'), RUNSET_CHROMIUM: '' });
    const plain = outputOf(members, 'plain');
    assert.match(plain, /runset: Playwright's own chromium-headless-shell is not installed at .*no-browsers\/chromium_headless_shell-\d+\/.* \(npx playwright install chromium\): running the system Chromium instead\n/);
    assert.match(plain, /runset: browser: Chromium \d+\.[\d.]+ built on .* \(\/usr\/bin\/chromium\), the system Chromium\n/);
    const own = outputOf(members, 'own');
    assert.match(own, /runset: browser: Chromium \d+\.[\d.]+ .*\(\/usr\/lib\/chromium\/chromium\), the suite's own executablePath\n/);
    assert.doesNotMatch(own, /not installed/, 'a suite that names its browser is not told about the managed one');
  });

  test('managed browser present: what npx playwright test would launch runs; RUNSET_CHROMIUM wins over it', { skip, timeout: 240_000 }, async () => {
    const dir = writeConfig();
    const browsers = path.join(dir, 'browsers');
    const shell = managedHeadlessShell(browsers);
    mkdirSync(path.dirname(shell.path), { recursive: true });
    symlinkSync(CHROMIUM_BINARY, shell.path);

    // Two servers at once: each its own copy of the suites, so no Playwright output folder is shared.
    const [managed, chosen] = await Promise.all([
      runSet(dir, { PLAYWRIGHT_BROWSERS_PATH: browsers, RUNSET_CHROMIUM: '' }),
      runSet(writeConfig(), { PLAYWRIGHT_BROWSERS_PATH: browsers, RUNSET_CHROMIUM: CHROMIUM_BINARY }),
    ]);
    const plain = outputOf(managed, 'plain');
    assert.ok(plain.includes(`runset: browser: ${shell.version} (${shell.path}), Playwright's own chromium-headless-shell (what npx playwright test launches)\n`), plain);
    assert.doesNotMatch(plain, /system Chromium/);
    assert.match(outputOf(managed, 'own'), /the suite's own executablePath/, "the suite's own executablePath is kept");

    for (const entry of ['plain', 'own']) {
      assert.match(outputOf(chosen, entry), /runset: browser: Chromium \d+\.[\d.]+ .*\(\/usr\/lib\/chromium\/chromium\), the operator's choice \(RUNSET_CHROMIUM \/ --chromium\)\n/, entry);
    }
  });
});
