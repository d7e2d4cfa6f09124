/**
 * One Playwright suite serving two entries — a smoke `grep` for prod, all of it
 * for staging — through the real server and a real Playwright run with the
 * system Chromium: each environment's sets hold that entry's cases, under the
 * suite's own names while the environments are disjoint, under `entry › …`
 * where both entries apply to one environment; and every member runs.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet } from '../helpers/server.js';
import { chromiumMissing, type PlaywrightMember } from './playwright-fixtures.js';

after(() => assertNoLeakedServers());

const SPEC = `
import { test, expect } from '@playwright/test';
test('home shows a title @smoke', async ({ page }) => {
  await page.setContent('<h1>Shop</h1>');
  await expect(page.locator('h1')).toHaveText('Shop');
});
test('checkout', async ({ page }) => {
  await page.setContent('<button>Pay</button>');
  await expect(page.locator('button')).toHaveText('Pay');
});
`;

const SMOKE = ['shop.spec.ts › home shows a title @smoke'];
const ALL = ['shop.spec.ts › home shows a title @smoke', 'shop.spec.ts › checkout'];

/** Writes the suite and a runset config whose tests are `tests`; returns the config's path. */
function writeConfig(tests: string): string {
  const dir = tempDir('runset-pw-entries-');
  mkdirSync(path.join(dir, 'suite', 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'suite', 'playwright.config.ts'), "export default { testDir: 'tests', timeout: 15_000 };\n");
  writeFileSync(path.join(dir, 'suite', 'tests', 'shop.spec.ts'), SPEC);
  const file = path.join(dir, 'runset.config.yaml');
  writeFileSync(file, `environments:\n  prod: { variables: {} }\n  staging: { variables: {} }\ntests:\n${tests}`);
  return file;
}

/** Creates a set in each environment, waits for both, and returns each one's members (name and status). */
async function runEach(configPath: string): Promise<Record<string, Array<Pick<PlaywrightMember, 'name' | 'status'>>>> {
  const server = await startRunset({ configPath, args: ['--workers', '2'] });
  try {
    const out: Record<string, Array<Pick<PlaywrightMember, 'name' | 'status'>>> = {};
    const ids = await Promise.all(['prod', 'staging'].map(async (env) => (await api(server, 'POST', '/v0/test-run-sets', { body: { env } })).body.testRunSetId as string));
    for (const [index, env] of ['prod', 'staging'].entries()) {
      const id = ids[index]!;
      const done = await waitForSet(server, id, 90_000);
      const members = (await api<{ testRuns: PlaywrightMember[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
      assert.equal(done.status, 'SUCCESS', JSON.stringify(members.map((m) => [m.name, m.status, m.error])));
      out[env] = members.map((m) => ({ name: m.name, status: m.status }));
    }
    return out;
  } finally {
    await server.stop();
  }
}

const passed = (names: string[]) => names.map((name) => ({ name, status: 'SUCCESS' }));

describe('two entries over one Playwright suite', { skip: chromiumMissing() }, () => {
  test('in disjoint environments: each set holds its entry\'s cases under the suite\'s own names, and runs them', { timeout: 240_000 }, async () => {
    const members = await runEach(writeConfig(`
  - { name: smoke, type: playwright, dir: suite, grep: "@smoke", environments: [prod] }
  - { name: full, type: playwright, dir: suite, environments: [staging] }
`));
    assert.deepEqual(members.prod, passed(SMOKE));
    assert.deepEqual(members.staging, passed(ALL));
  });

  test('both in one environment: every case is named after its entry, and that set runs both entries\' cases', { timeout: 240_000 }, async () => {
    const members = await runEach(writeConfig(`
  - { name: smoke, type: playwright, dir: suite, grep: "@smoke", environments: [prod, staging] }
  - { name: full, type: playwright, dir: suite, environments: [staging] }
`));
    assert.deepEqual(members.prod, passed(SMOKE.map((n) => `smoke › ${n}`)));
    assert.deepEqual(members.staging, passed([...SMOKE.map((n) => `smoke › ${n}`), ...ALL.map((n) => `full › ${n}`)]));
  });
});
