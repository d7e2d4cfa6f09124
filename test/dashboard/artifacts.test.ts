/**
 * A failed Playwright test in the dashboard: its member page shows the failure's
 * screenshot inline (loaded through the session cookie) and offers the trace as
 * a download. A tiny Playwright suite of one failing test, run by the real
 * server with Debian's Chromium; skips, saying why, where Chromium is absent.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium, type Browser, type Page } from 'playwright-core';
import { api, assertNoLeakedServers, startRunset, waitForSet, type RunningServer } from '../helpers/server.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing, ensureDashboardBuilt, originOf, writeOneSpecSuite } from '../helpers/dashboard.js';

const SPEC = `
import { test, expect } from '@playwright/test';
test('cart shows three items', async ({ page }) => {
  await page.setContent('<h1>Cart</h1><p>2 items</p>');
  await expect(page.locator('p')).toHaveText('3 items', { timeout: 500 });
});
`;

function writeSuite(): string {
  const config = 'environments:\n  shop: { variables: {} }\ntests:\n  - { name: shop, type: playwright, dir: suite }\n';
  return writeOneSpecSuite({ prefix: 'runset-dash-pw-', spec: SPEC, specName: 'cart.spec.ts', config });
}

describe('dashboard: a failed Playwright test', { skip: chromiumMissing() }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let setId: string;

  before(async () => {
    await ensureDashboardBuilt();
    server = await startRunset({ configPath: writeSuite(), args: ['--workers', '1'] });
    setId = (await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'shop' } })).body.testRunSetId as string;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
    page = await browser.newPage({ baseURL: originOf(server.url) });
    page.setDefaultTimeout(20_000);
    await page.goto('/');
    await page.getByLabel('API key').fill(server.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Test Run Sets' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    assert.equal(await server.stop(), 0);
  });

  test('opens the failed member and sees its screenshot; the trace is a download', async () => {
    assert.equal((await waitForSet(server, setId, 90_000)).status, 'FAIL');
    await page.goto(`/sets/${setId}`);
    await page.locator('.set-status [data-status="FAIL"]').waitFor();
    // The members table's link: the failures section above it links the same member.
    await page.locator('table.members-table').getByRole('link', { name: /cart shows three items/ }).click();
    await page.getByRole('heading', { name: /cart shows three items/ }).waitFor();

    const shot = page.getByRole('img', { name: /^Screenshot .*\.png of / });
    await shot.waitFor();
    await page.waitForFunction(() => {
      const img = (globalThis as unknown as { document: { querySelector(s: string): { complete: boolean; naturalWidth: number } | null } }).document.querySelector('figure.screenshot img');
      return img !== null && img.complete && img.naturalWidth > 0;
    });
    const src = await shot.getAttribute('src');
    assert.match(src ?? '', /^\/api\/v0\/artifacts\/[0-9a-f-]{36}$/);

    const trace = page.getByRole('link', { name: /^Download trace: trace.*\.zip$/ });
    await trace.first().waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), trace.first().click()]);
    assert.match(download.suggestedFilename(), /\.zip$/);
    const status = await page.evaluate<number, string>((url) => fetch(url).then((r) => r.status), (await trace.first().getAttribute('href'))!);
    assert.equal(status, 200, 'the session cookie fetches the trace');
  });
});

after(() => assertNoLeakedServers());
