/**
 * The dashboard shows only what the signed-in key may do, in Chromium against
 * the real server: a read key sees a running set without Cancel or Run again,
 * and no Run a set or Keys page; an admin key sees them, makes a key on the
 * Keys page (its token shown once) and revokes it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chromium, type Browser, type Page } from 'playwright-core';
import { api, assertNoLeakedServers, CLI, startRunset, type RunningServer } from '../helpers/server.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing, ensureDashboardBuilt, originOf } from '../helpers/dashboard.js';

const CONFIG = `
environments:
  staging: { variables: {} }
  preview: { variables: {} }
tests:
  - name: long wait
    type: command
    run: [node, -e, "setTimeout(() => {}, 60000)"]
`;

const skip = chromiumMissing();
if (skip) console.log(`dashboard access tests skipped: ${skip}`);

describe('dashboard access by role, in Chromium', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let readKey: string;
  let setId: string;

  before(async () => {
    await ensureDashboardBuilt();
    server = await startRunset({ config: CONFIG, args: ['--workers', '1'] });
    const made = spawnSync(process.execPath, [CLI, 'keys', 'create', '--name', 'reader', '--role', 'read', '--data-dir', server.dataDir], { encoding: 'utf8', timeout: 15_000 });
    assert.equal(made.status, 0, made.stderr);
    readKey = made.stdout.trim();
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' } });
    setId = created.body.testRunSetId as string;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
  });
  after(async () => {
    if (setId) await api(server, 'POST', `/v0/test-run-sets/${setId}/cancel`);
    await browser?.close();
    assert.equal(await server?.stop(), 0);
    assertNoLeakedServers();
  });

  async function signedIn(key: string): Promise<Page> {
    const context = await browser.newContext({ baseURL: originOf(server.url) });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`/sets/${setId}`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /^Set / }).waitFor();
    return page;
  }

  test('a read key sees the running set without Cancel or Run again, and no Run a set or Keys', async () => {
    const page = await signedIn(readKey);
    try {
      await page.locator('.set-status [data-status]').waitFor();
      await page.getByText('key: reader (read)').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Cancel set' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Run again' }).count(), 0);
      const nav = page.getByRole('navigation', { name: 'Main' });
      assert.equal(await nav.getByRole('link', { name: 'Run a set' }).count(), 0);
      assert.equal(await nav.getByRole('link', { name: 'Keys' }).count(), 0);
      await nav.getByRole('link', { name: 'Workers' }).waitFor();
      await page.goto('/trigger');
      await page.getByText('it may look at sets, not start them').waitFor();
      await page.goto('/keys');
      await page.getByRole('alert').filter({ hasText: /listKeys needs role admin/ }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Make the key' }).count(), 0);
    } finally {
      await page.context().close();
    }
  });

  test('an admin key sees Cancel and the Keys page, makes a key there (token once) and revokes it', async () => {
    const page = await signedIn(server.apiKey);
    try {
      await page.getByRole('button', { name: 'Cancel set' }).waitFor();
      await page.getByRole('button', { name: 'Run again' }).waitFor();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Keys' }).click();
      await page.getByRole('heading', { name: 'Keys' }).waitFor();
      await page.locator('tr[data-key="reader"]').getByText('read', { exact: true }).waitFor();
      await page.getByLabel('Name').fill('preview bot');
      await page.getByLabel('Role').selectOption('trigger');
      await page.getByRole('checkbox', { name: 'preview' }).check();
      await page.getByLabel('Expires after (empty: never)').fill('30d');
      await page.getByRole('button', { name: 'Make the key' }).click();
      const token = await page.getByLabel('New key token').inputValue();
      assert.match(token, /^rs_[A-Za-z0-9_-]{43}$/);
      const row = page.locator('tr[data-key="preview bot"]');
      await row.getByText('preview', { exact: true }).waitFor();
      const made = { url: server.url, apiKey: token };
      assert.equal((await api(made, 'POST', '/v0/test-run-sets', { body: { env: 'staging' } })).status, 403, 'the new key is limited to preview');
      assert.equal((await api(made, 'GET', `/v0/test-run-sets/${setId}`)).status, 404, 'and does not see staging sets');

      page.once('dialog', (dialog) => void dialog.accept());
      await row.getByRole('button', { name: 'Revoke preview bot' }).click();
      await row.getByText('revoked').waitFor();
      await page.reload();
      await page.getByRole('heading', { name: 'Keys' }).waitFor();
      assert.equal(await page.getByLabel('New key token').count(), 0, 'the token is not shown again');
      await new Promise((r) => setTimeout(r, 1100)); // a revoked key stops working within a second (key cache)
      assert.equal((await api(made, 'GET', `/v0/test-run-sets/${setId}`)).status, 401);
    } finally {
      await page.context().close();
    }
  });
});
