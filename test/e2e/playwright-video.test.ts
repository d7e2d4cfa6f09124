/**
 * A suite that asks for video, on a machine without Playwright's ffmpeg (an
 * empty PLAYWRIGHT_BROWSERS_PATH makes sure of it): run directly, every test
 * fails on the missing executable; through runset, video is off for the batch,
 * the tests run in the real system Chromium with their own outcomes, and each
 * member's output says once that video was turned off and why. Every run
 * (the direct one, and each server's) has a suite folder of its own, so all run
 * at once.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, REPO_ROOT, startRunset, tempDir, waitForSet } from '../helpers/server.js';
import { CHROMIUM_ARGS, DEFAULT_CHROMIUM } from '../../src/executors/playwright/chromium.js';
import { chromiumMissing, type PlaywrightMember } from './playwright-fixtures.js';

after(() => assertNoLeakedServers());

const chromium = process.env.RUNSET_CHROMIUM || DEFAULT_CHROMIUM;

/** The suite's config: `use` (video on, runset's Chromium) and, when given, its projects. */
function videoConfig(projects?: string): string {
  return `module.exports = { testDir: 'tests', workers: 1, use: { video: 'on',
    launchOptions: { executablePath: ${JSON.stringify(chromium)}, args: ${JSON.stringify(CHROMIUM_ARGS)} } }${projects ? `, projects: ${projects}` : ''} };\n`;
}

function writeVideoSuite(projects?: string): string {
  const dir = tempDir('runset-pw-video-');
  const suite = path.join(dir, 'suite');
  mkdirSync(path.join(suite, 'tests'), { recursive: true });
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(suite, 'node_modules'), 'dir');
  writeFileSync(path.join(suite, 'package.json'), '{"private":true}');
  // The suite's own launch options, so that the direct run uses the same system Chromium as runset.
  writeFileSync(path.join(suite, 'playwright.config.js'), videoConfig(projects));
  writeFileSync(path.join(suite, 'tests', 'video.spec.js'), `const { test, expect } = require('@playwright/test');
test('shows a title', async ({ page }) => {
  await page.setContent('<h1>Shop</h1>');
  await expect(page.locator('h1')).toHaveText('Shop');
});
test('fails on its own assertion', async ({ page }) => {
  await page.setContent('<h1>Shop</h1>');
  await expect(page.locator('h1')).toHaveText('Cart', { timeout: 500 });
});
`);
  writeFileSync(path.join(dir, 'runset.config.yaml'), 'environments:\n  local: { variables: {} }\ntests:\n  - { name: video, type: playwright, dir: suite }\n');
  mkdirSync(path.join(dir, 'no-browsers'));
  return dir;
}

/** `npx playwright test` in the suite of `dir`, as its users run it (not sync: runset's run goes on meanwhile). */
function runDirectly(dir: string, env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  const cli = path.join(REPO_ROOT, 'node_modules', '@playwright', 'test', 'cli.js');
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, 'test', '--reporter=line'], { cwd: path.join(dir, 'suite'), encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...env } }, (_error, stdout, stderr) => resolve({ stdout, stderr }));
  });
}

describe('video without ffmpeg (each case its own suites and server, all at once)', { concurrency: true }, () => {
  test('a suite asking for video without ffmpeg: video off for the batch, said in every member, tests run as they are', { skip: chromiumMissing() }, async () => {
    const dir = writeVideoSuite();
    const noBrowsers = { PLAYWRIGHT_BROWSERS_PATH: path.join(dir, 'no-browsers') };
    const direct = runDirectly(writeVideoSuite(), noBrowsers);
    const server = await startRunset({ configPath: path.join(dir, 'runset.config.yaml'), env: noBrowsers, args: ['--workers', '1'] });
    try {
      const id = (await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'local' } })).body.testRunSetId as string;
      await waitForSet(server, id, 120_000);
      const members = (await api<{ testRuns: PlaywrightMember[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
      const byName = new Map(members.map((m) => [m.name, m]));
      const passed = byName.get('video.spec.js › shows a title')!;
      const failed = byName.get('video.spec.js › fails on its own assertion')!;
      assert.equal(passed.status, 'SUCCESS', JSON.stringify(passed));
      assert.equal(failed.status, 'FAIL');
      assert.match(failed.error ?? '', /toHaveText/, 'its own failure, not the missing ffmpeg');
      // No trace setting and no retry: runset's default, on-first-retry, traced nothing; the screenshot is kept.
      assert.deepEqual(failed.artifacts.map((a) => a.name).filter((n) => /^(trace|screenshot)/.test(n)), ['screenshot.png']);
      const notice = /^runset: video is off for this run: the suite asks for video, and Playwright records it with its own ffmpeg, which is not at .*no-browsers\/ffmpeg-\d+\/ffmpeg-linux/;
      for (const m of members) {
        assert.match(m.output ?? '', notice, m.name);
        assert.equal((m.output ?? '').split('video is off').length, 2, `${m.name}: said once`);
        assert.ok(!m.artifacts.some((a) => a.name.endsWith('.webm')), 'no video');
      }
    } finally {
      await server.stop();
    }
    const { stdout, stderr } = await direct;
    assert.match(stdout + stderr, /Executable doesn't exist at .*ffmpeg/, 'the direct run fails on the missing ffmpeg');
    assert.match(stdout, /2 failed/);
  });

  test("a project that sets video: 'off' is told nothing; a project that inherits video: on is told", { skip: chromiumMissing() }, async () => {
    const dir = writeVideoSuite("[{ name: 'quiet', use: { video: 'off' } }, { name: 'recorded' }]");
    const server = await startRunset({ configPath: path.join(dir, 'runset.config.yaml'), env: { PLAYWRIGHT_BROWSERS_PATH: path.join(dir, 'no-browsers') }, args: ['--workers', '1'] });
    try {
      const id = (await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'local' } })).body.testRunSetId as string;
      await waitForSet(server, id, 120_000);
      const members = (await api<{ testRuns: PlaywrightMember[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
      assert.equal(members.length, 4);
      for (const m of members) {
        const recorded = m.name.startsWith('[recorded]');
        assert.ok(recorded || m.name.startsWith('[quiet]'), m.name);
        assert.equal(m.status, m.name.includes('fails on its own assertion') ? 'FAIL' : 'SUCCESS', `${m.name}: ${m.error}`);
        assert.equal(/^runset: video is off for this run/.test(m.output ?? ''), recorded, `${m.name}: told only where its project asked for video`);
        assert.ok(!m.artifacts.some((a) => a.name.endsWith('.webm')), 'no video');
      }
    } finally {
      await server.stop();
    }
  });
});
