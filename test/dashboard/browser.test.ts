/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core,
 * against the real server (CLI child process, SQLite file). Skips, saying why,
 * only where Chromium is not installed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { api, assertNoLeakedServers, startRunset, type RunningServer } from '../helpers/server.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumMissing, ensureDashboardBuilt, originOf } from '../helpers/dashboard.js';
import { Receiver } from '../helpers/receiver.js';

const SECRET = 'browser-secret-never-on-screen';
const CONFIG = `
environments:
  staging:
    variables:
      GREETING: hello
      TOKEN: \${env:BROWSER_TOKEN}
  preview:
    variables:
      GREETING: hi
tests:
  - name: quick pass
    type: command
    run: [node, -e, "process.exit(0)"]
  - name: slow failure
    type: command
    run: [node, -e, "console.log('checking the cart'); setTimeout(() => { console.log('expected 3 items, got 2'); process.exit(1) }, 3000)"]
    environments: [staging]
webhooks:
  - name: team
    url: \${env:HOOK_URL}
    secret: \${env:HOOK_SECRET}
`;

const skip = chromiumMissing();
if (skip) console.log(`dashboard browser tests skipped: ${skip}`);

describe('dashboard in Chromium', { skip }, () => {
  let server: RunningServer;
  let base: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const receiver = new Receiver();

  before(async () => {
    await ensureDashboardBuilt();
    await receiver.start();
    server = await startRunset({ config: CONFIG, env: { BROWSER_TOKEN: SECRET, HOOK_URL: receiver.url, HOOK_SECRET: 'hook-secret' }, args: ['--workers', '2'] });
    base = originOf(server.url);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS] });
    context = await browser.newContext({ baseURL: base });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  });
  after(async () => {
    await browser?.close();
    assert.equal(await server.stop(), 0);
    await receiver.stop();
  });

  test('without a session there is no page and no data', async () => {
    const anonymous = await browser.newContext({ baseURL: base });
    try {
      const p = await anonymous.newPage();
      await p.goto('/sets/00000000-0000-4000-8000-000000000000');
      assert.equal(new URL(p.url()).pathname, '/signin');
      assert.equal(new URL(p.url()).searchParams.get('next'), '/sets/00000000-0000-4000-8000-000000000000');
      await p.getByRole('heading', { name: 'Sign in to runset' }).waitFor();
      const status = await p.evaluate<number>("fetch('/api/v0/test-run-sets').then((r) => r.status)");
      assert.equal(status, 401);
      await p.goto('/trigger');
      assert.equal(new URL(p.url()).pathname, '/signin');
      await p.getByLabel('API key').fill(`rs_${'A'.repeat(43)}`);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('alert').filter({ hasText: /unknown or revoked/ }).waitFor();
    } finally {
      await anonymous.close();
    }
  });

  test('signs in with an API key (keyboard only) and lands where it was going', async () => {
    await page.goto('/?env=staging');
    assert.equal(new URL(page.url()).pathname, '/signin');
    const field = page.getByLabel('API key');
    await field.focus();
    await page.keyboard.type(server.apiKey);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Test Run Sets' }).waitFor();
    assert.equal(new URL(page.url()).search, '?env=staging');
    assert.equal(await page.getByLabel('Environment').inputValue(), 'staging');
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'runset_session');
    assert.ok(session?.httpOnly, 'the session cookie is HttpOnly');
    assert.equal(session?.sameSite, 'Strict');
    assert.equal(await page.evaluate('document.cookie'), '', 'page scripts cannot read the session');
  });

  test('a set moves from RUNNING to FAIL live, in the list and on its page', async () => {
    await page.goto('/');
    await page.evaluate('window.marker = 42');
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' } });
    const id = created.body.testRunSetId as string;
    const row = page.locator(`tr[data-set-id="${id}"]`);
    await row.locator('[data-status="RUNNING"]').waitFor();
    await row.getByRole('link', { name: `Set ${id}` }).click();
    await page.getByRole('heading', { name: /^Set / }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/sets/${id}`);
    const badge = page.locator('.set-status [data-status]');
    assert.equal(await badge.getAttribute('data-status'), 'RUNNING', 'the slow member is still running');
    await page.locator('.set-status [data-status="FAIL"]').waitFor();
    assert.equal(await page.evaluate('window.marker'), 42, 'no reload: the page updated itself');
    assert.match((await page.getByRole('img', { name: /ended/ }).getAttribute('aria-label')) ?? '', /2 of 2 ended: 1 passed, 1 failed/);
    const failed = page.locator('tr[data-member="slow failure"]');
    await failed.getByText('exited with code 1').waitFor();
    assert.equal(await failed.locator('[data-status]').getAttribute('data-status'), 'FAIL');
    await page.getByText('staging', { exact: true }).waitFor();
  });

  test('opens the failed member and sees why it failed', async () => {
    await page.locator('tr[data-member="slow failure"]').getByRole('link', { name: 'slow failure' }).click();
    await page.getByRole('heading', { name: 'slow failure' }).waitFor();
    await page.getByText('exited with code 1').first().waitFor();
    const output = page.getByLabel('Output of the test');
    assert.match(await output.innerText(), /expected 3 items, got 2/);
    await page.getByRole('link', { name: 'Sets' }).first().click();
    await page.getByRole('heading', { name: 'Test Run Sets' }).waitFor();
  });

  test('triggers a set from the form, with overrides, secret ones masked afterwards', async () => {
    await page.getByRole('link', { name: 'Run a set' }).first().click();
    await page.getByRole('heading', { name: 'Run a set' }).waitFor();
    await page.getByLabel('Environment').selectOption('staging');
    await page.getByText('2 tests run in staging.').waitFor();
    assert.equal(await page.getByLabel(/TOKEN/).getAttribute('type'), 'password');
    await page.getByLabel('GREETING').fill('from the form');
    await page.getByLabel(/TOKEN/).fill('typed-secret');
    await page.getByRole('button', { name: 'Start the set' }).click();
    await page.waitForURL(/\/sets\/[0-9a-f-]{36}$/);
    const id = new URL(page.url()).pathname.split('/')[2]!;
    const overrides = page.locator('table.overrides');
    await overrides.getByText('from the form').waitFor();
    assert.match(await overrides.innerText(), /TOKEN\s+\*\*\*/);
    assert.ok(!(await page.content()).includes('typed-secret'), 'the secret override is not on the page');
    const details = await api(server, 'GET', `/v0/test-run-sets/${id}/details`);
    assert.equal(details.body.env, 'staging');

    await page.locator('.set-status [data-status="FAIL"]').waitFor();
    await page.getByRole('button', { name: 'Run again' }).click();
    await page.waitForURL((url) => /\/sets\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(id));
    await page.locator('table.overrides').getByText('from the form').waitFor();
  });

  test('filters the list by environment and status', async () => {
    await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'preview' } });
    await page.goto('/');
    await page.getByLabel('Environment').selectOption('preview');
    await page.waitForURL(/env=preview/);
    await page.locator('tbody tr').first().waitFor();
    const envs = await page.locator('tbody td[data-label="Environment"]').allInnerTexts();
    assert.ok(envs.length > 0 && envs.every((e) => e === 'preview'), envs.join(','));
    await page.getByLabel('Status').selectOption('FAIL');
    await page.getByText('No set matches these filters.').waitFor();
  });

  test('is readable at 375 px: nothing wider than the screen', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    for (const path of ['/', '/trigger']) {
      await page.goto(path);
      await page.locator('main h1').waitFor();
      await page.waitForTimeout(300);
      const width = await page.evaluate<number>('document.documentElement.scrollWidth');
      assert.ok(width <= 375, `${path} is ${width}px wide`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  test('cancels a running set from its page (after a confirmation), and says who did', async () => {
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' } });
    const id = created.body.testRunSetId as string;
    await page.goto(`/sets/${id}`);
    await page.locator('tr[data-member="slow failure"] [data-status="RUNNING"]').waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Cancel set' }).click();
    await page.locator('.set-status [data-status="FAIL"]').waitFor();
    const failed = page.locator('tr[data-member="slow failure"]');
    await failed.getByText('cancelled').waitFor();
    await failed.getByText('by key bootstrap').waitFor();
    await page.locator('[data-cancelled]').getByText(/by key bootstrap/).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Cancel set' }).count(), 0, 'an ended set offers no cancel');
  });

  test("a set's labels: the commit and the pipeline are links, a label filters the list", async () => {
    const labels = {
      ci: 'github',
      commit: 'abcdef1234567890',
      commit_url: 'https://github.com/acme/shop/commit/abcdef1234567890',
      branch: 'labelled-branch',
      pipeline: 'https://github.com/acme/shop/actions/runs/9',
    };
    const labelled = (await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'preview', labels } })).body.testRunSetId as string;
    const other = (await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'preview' } })).body.testRunSetId as string;
    await page.goto(`/sets/${labelled}`);
    const list = page.getByRole('list', { name: 'Labels' });
    assert.equal(await list.getByRole('link', { name: 'abcdef123456' }).getAttribute('href'), labels.commit_url);
    assert.equal(await list.getByRole('link', { name: labels.pipeline }).getAttribute('href'), labels.pipeline);
    assert.equal(await list.getByText('commit_url').count(), 0, 'the commit link is not a label of its own');
    await list.getByRole('link', { name: 'branch', exact: true }).click();
    await page.waitForURL((url) => url.searchParams.get('label') === 'branch:labelled-branch');
    await page.locator(`a[href="/sets/${labelled}"]`).first().waitFor();
    assert.equal(await page.locator(`a[href="/sets/${other}"]`).count(), 0, 'the list shows only the labelled set');
    assert.equal(await page.getByLabel('Label').inputValue(), 'branch:labelled-branch');
  });

  test("a set's page shows the selection it was created with; a set of every test shows none", async () => {
    const chosen = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', select: { grep: 'quick', names: ['quick pass'] } } });
    assert.equal(chosen.status, 200, chosen.text);
    await page.goto(`/sets/${chosen.body.testRunSetId as string}`);
    const facts = page.getByRole('list', { name: 'Selection' });
    assert.equal(await facts.locator('[data-select="grep"]').innerText(), 'name matches quick');
    assert.equal(await facts.locator('[data-select="names"]').innerText(), 'names quick pass');
    const all = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'preview' } });
    await page.goto(`/sets/${all.body.testRunSetId as string}`);
    await page.getByText('Environment').first().waitFor();
    assert.equal(await page.getByRole('list', { name: 'Selection' }).count(), 0);
  });

  test("a set's page lists its webhook deliveries and their attempts", async () => {
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'preview' } });
    await page.goto(`/sets/${created.body.testRunSetId as string}`);
    const row = page.locator('tr[data-delivery="team set.finished"]');
    await row.getByText('delivered').waitFor();
    await row.getByText('204').waitFor();
  });

  test("quarantine from a test's page: the next set passes with the failure marked, and ending it works", { timeout: 60_000 }, async () => {
    await page.goto(`/test?env=staging&name=${encodeURIComponent('slow failure')}`);
    const section = page.getByRole('region', { name: 'Quarantine' });
    await section.getByText('Not quarantined').waitFor();
    await section.getByLabel('Reason').fill('cart count, issue #12');
    await section.getByLabel('Days').fill('3');
    await section.getByRole('button', { name: 'Quarantine' }).click();
    await section.getByText(/cart count, issue #12/).waitFor();
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' } });
    await page.goto(`/sets/${created.body.testRunSetId as string}`);
    await page.locator('.set-status [data-status="SUCCESS"]').waitFor();
    assert.equal(await page.locator('[data-rule="quarantine"]').innerText(), '— 1 test quarantined failed');
    await page.locator('tr[data-member="slow failure"]').getByText('quarantined').waitFor();
    await page.goto(`/test?env=staging&name=${encodeURIComponent('slow failure')}`);
    await section.getByRole('button', { name: 'End quarantine' }).click();
    await section.getByText('Not quarantined').waitFor();
    assert.deepEqual((await api(server, 'GET', '/v0/quarantine')).body.quarantine, []);
  });

  test('signs out: the session is gone and pages go back to sign-in', async () => {
    await page.goto('/');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to runset' }).waitFor();
    await page.goto('/');
    assert.equal(new URL(page.url()).pathname, '/signin');
    assert.equal((await context.cookies()).find((c) => c.name === 'runset_session'), undefined);
  });
});

after(() => assertNoLeakedServers());
