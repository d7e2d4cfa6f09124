/**
 * The insight views in Chromium, over a real server whose history is made by
 * the real scheduler: five sets of command and HTTP tests, broken on purpose
 * by an override (BREAK names the tests that fail; BASE_URL at a closed port
 * breaks the HTTP ones). Then: a set's failures by cause with newly-failing and
 * fails-often marks, an environment's pass-rate chart and last sets, the Tests
 * page (outcome strips, rates, sorting, filters) and a test's page (duration
 * chart, recent failures).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { api, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { chromiumMissing, ensureDashboardBuilt, openSignedIn } from '../helpers/dashboard.js';

/** A command test that exits with `code` when BREAK (comma-separated) names `key`. */
const breakable = (name: string, key: string, code: number) => `  - name: ${name}
    type: command
    run: [node, -e, "if ((process.env.BREAK || '').split(',').includes('${key}')) { console.error('${key} broke'); process.exit(${code}) }"]
`;

function config(target: string, marker: string): string {
  const variables = `    variables:\n      BREAK: none\n      BASE_URL: ${target}\n      MARKER: ${marker}\n`;
  return `
environments:
  staging:
${variables}  preview:
${variables}tests:
${breakable('checkout', 'checkout', 1)}${breakable('search', 'search', 2)}${breakable('login', 'login', 3)}  - name: home page
    type: http
    request: { url: "{{BASE_URL}}/" }
  - name: home page greets
    type: http
    request: { url: "{{BASE_URL}}/" }
    expect: { bodyContains: Welcome }
  # With BREAK=cart, fails its first attempt and passes the retry: flaky.
  - name: cart badge
    type: command
    retries: 1
    run: [node, -e, "const fs = require('fs'); const f = process.env.MARKER; if ((process.env.BREAK || '').split(',').includes('cart') && !fs.existsSync(f)) { fs.writeFileSync(f, ''); process.exit(1) } fs.rmSync(f, { force: true })"]
  - name: preview banner
    type: command
    run: [node, -e, "process.exit(0)"]
    environments: [preview]
`;
}

/** A port nothing listens on (one the system just gave out and took back): connections to it are refused. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** An attribute of every element a locator finds, in page order. */
async function attributes(locator: Locator, name: string): Promise<(string | null)[]> {
  return Promise.all((await locator.all()).map((one) => one.getAttribute(name)));
}

const skip = chromiumMissing();

describe('insight views in Chromium', { skip }, () => {
  let target: Server;
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  const sets: string[] = [];

  async function runSet(env: string, envOverride: Record<string, string>): Promise<string> {
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env, envOverride } });
    assert.equal(created.status, 200, created.text);
    const id = created.body.testRunSetId as string;
    await waitForSet(server, id, 60_000);
    return id;
  }

  before(async () => {
    target = createServer((_req, res) => res.end('Welcome'));
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    await ensureDashboardBuilt();
    const marker = path.join(tempDir('runset-flaky-'), 'failed-once');
    server = await startRunset({ config: config(`http://127.0.0.1:${(target.address() as AddressInfo).port}`, marker), args: ['--workers', '2'] });
    // One after another, so each test's history has a clear order.
    sets.push(await runSet('staging', {}));
    sets.push(await runSet('staging', { BREAK: 'search,cart' }));
    sets.push(await runSet('staging', { BREAK: 'search,login' }));
    sets.push(await runSet('staging', { BREAK: 'checkout,search,login', BASE_URL: `http://127.0.0.1:${await closedPort()}` }));
    await runSet('preview', {});

    ({ browser, page } = await openSignedIn(server));
  });
  after(async () => {
    await browser?.close();
    assert.equal(await server.stop(), 0);
    await new Promise((resolve) => target.close(resolve));
  });

  test("a set's failures are grouped by cause, each test marked newly failing, failing again or failing often", async () => {
    await page.goto(`/sets/${sets[3]}`);
    await page.getByRole('heading', { name: 'Failures by cause' }).waitFor();
    const groups = page.locator('li.failure-group');
    assert.equal(await groups.count(), 2);
    assert.equal((await groups.nth(0).locator('.failure-head').textContent())?.trim(), '3 tests: exited with code <n>');
    assert.match((await groups.nth(1).locator('.failure-head').textContent()) ?? '', /^2 tests: GET http:\/\/<n>:<n>\/ failed: ECONNREFUSED$/);
    assert.deepEqual((await attributes(groups.nth(0).locator('li[data-member]'), 'data-member')).sort(), ['checkout', 'login', 'search']);

    const trend = (member: string) => page.locator(`li[data-member="${member}"] a.trend`);
    await trend('search').waitFor();
    assert.equal(await trend('checkout').getAttribute('data-trend'), 'newly-failing');
    assert.match((await trend('checkout').textContent()) ?? '', /^newly failing \(failed 1 of its last 4 runs in staging\)$/);
    assert.equal(await trend('search').getAttribute('data-trend'), 'fails-often');
    assert.match((await trend('search').textContent()) ?? '', /^fails often \(failed 3 of its last 4 runs/);
    assert.equal(await trend('login').getAttribute('data-trend'), 'failing-again');
    assert.equal(await trend('home page').getAttribute('data-trend'), 'newly-failing');
    // The mark leads to the test's history.
    await trend('search').click();
    await page.getByRole('heading', { name: 'search', exact: true }).waitFor();
    assert.equal(new URL(page.url()).searchParams.get('name'), 'search');
  });

  test('a set that passed has no failures section', async () => {
    await page.goto(`/sets/${sets[0]}`);
    await page.getByRole('heading', { name: 'Members' }).waitFor();
    await page.locator('tr[data-member="checkout"]').waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Failures by cause' }).count(), 0);
  });

  test("an environment's page charts its pass rate per day, in words too, and lists its last sets", async () => {
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Environments' }).click();
    await page.locator('tr[data-env="staging"]').getByRole('link', { name: 'staging' }).click();
    await page.getByRole('heading', { name: 'Environment staging' }).waitFor();
    const chart = page.locator('figure[data-chart="pass-rate"]');
    const svg = chart.getByRole('img', { name: 'Pass rate per day in staging' });
    await svg.waitFor();
    const summary = await chart.locator('.chart-summary').textContent();
    assert.match(summary ?? '', /^staging, 1 day with ended sets from \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d: 1 of 4 sets passed \(25%\)\./);
    assert.equal(await svg.getAttribute('aria-describedby'), await chart.locator('.chart-summary').getAttribute('id'));
    // Two series told apart by line style and point shape, not colour: sets (solid, circles), tests (dashed, squares).
    assert.equal(await chart.locator('[data-series="sets passed"] polyline').getAttribute('stroke-dasharray'), null);
    assert.equal(await chart.locator('[data-series="tests passed"] polyline').getAttribute('stroke-dasharray'), '6 4');
    assert.equal(await chart.locator('[data-series="sets passed"] [data-shape="circle"]').count(), 1);
    assert.match((await chart.locator('[data-series="tests passed"] [data-shape="square"] title').textContent()) ?? '', /16 of 24|67% of their tests/);
    await chart.getByText('As a table').click();
    assert.match((await chart.locator('details tbody tr').first().textContent()) ?? '', /4.*1 \(25%\).*16 of 24 \(67%\)/);
    // Its last sets, newest first: the four staging sets and not the preview one.
    const rows = page.locator('tr[data-set-id]');
    assert.deepEqual(await attributes(rows, 'data-set-id'), [...sets].reverse());
  });

  test('the Tests page: a strip of last outcomes per test, rates and durations, sorted by any column, filtered by environment and name', async () => {
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tests' }).click();
    await page.getByRole('heading', { name: 'Tests' }).waitFor();
    const rows = page.locator('tr[data-test]');
    await rows.first().waitFor();
    assert.equal(new URL(page.url()).searchParams.get('env'), 'staging', 'the first environment until one is picked');
    assert.deepEqual(await attributes(rows, 'data-test'), ['cart badge', 'checkout', 'home page', 'home page greets', 'login', 'search']);

    const row = (name: string) => page.locator(`tr[data-test="${name}"]`);
    // Oldest first; a failure, a flaky pass and a pass differ in shape (height, hatching), and say so in words.
    assert.deepEqual(await attributes(row('search').locator('.strip-cell'), 'data-kind'), ['pass', 'fail', 'fail', 'fail']);
    assert.equal(await row('search').locator('.strip .visually-hidden').textContent(), 'last 4 runs: 1 passed, 0 flaky, 3 failed; the newest failed');
    assert.deepEqual(await attributes(row('cart badge').locator('.strip-cell'), 'data-kind'), ['pass', 'flaky', 'pass', 'pass']);
    assert.equal(await row('search').locator('td[data-label="Pass rate"]').textContent(), '25%');
    assert.equal(await row('cart badge').locator('td[data-label="Flaky rate"]').textContent(), '25%');
    assert.equal(await row('cart badge').locator('td[data-label="Last failure"]').textContent(), 'never');
    assert.match((await row('checkout').locator('td[data-label="Median"]').textContent()) ?? '', /^\d+ ms$|^\d+(\.\d)? s$/);

    await page.getByRole('button', { name: 'Pass rate' }).click();
    await page.locator('th[data-sort="passRate"][aria-sort="ascending"]').waitFor();
    assert.deepEqual((await attributes(rows, 'data-test')).slice(0, 2), ['search', 'login']);
    await page.getByRole('button', { name: 'Pass rate' }).click();
    await page.locator('th[data-sort="passRate"][aria-sort="descending"]').waitFor();
    assert.equal(await rows.first().getAttribute('data-test'), 'cart badge');
    assert.equal(new URL(page.url()).searchParams.get('sort'), 'passRate');

    await page.getByLabel('Name contains').fill('home');
    await page.getByLabel('Name contains').press('Enter');
    await page.waitForURL(/name=home/);
    await row('search').waitFor({ state: 'detached' });
    // The filtered list replaces the table once its answer comes: wait for it, not for the old rows to go.
    await row('home page greets').waitFor();
    assert.deepEqual((await attributes(rows, 'data-test')).sort(), ['home page', 'home page greets']);

    await page.getByLabel('Name contains').fill('');
    await page.getByLabel('Name contains').press('Enter');
    await page.getByLabel('Environment').selectOption('preview');
    await row('preview banner').waitFor();
    assert.equal(await rows.count(), 7);
    assert.deepEqual(await attributes(row('search').locator('.strip-cell'), 'data-kind'), ['pass'], 'the preview run only');
  });

  test('a link clicked as soon as the page has rendered, before its effects ran, still leads to its page', async () => {
    // DOMContentLoaded fires after the module rendered the frame but before Preact ran its effects (after paint):
    // a click then is what a fast user or a busy machine makes (Playwright's click after goto, under load).
    const early = await page.context().newPage();
    try {
      await early.addInitScript(`document.addEventListener('DOMContentLoaded', () => document.querySelector('nav a[href="/tests"]').click())`);
      await early.goto('/');
      await early.getByRole('heading', { name: 'Tests', exact: true }).waitFor();
      assert.equal(new URL(early.url()).pathname, '/tests');
    } finally {
      await early.close();
    }
  });

  test("a test's page charts its duration over time, with a summary and a table, and lists its recent failures", async () => {
    await page.goto('/tests?env=staging');
    await page.locator('tr[data-test="search"]').getByRole('link', { name: 'search' }).click();
    await page.getByRole('heading', { name: 'search', exact: true }).waitFor();
    const chart = page.locator('figure[data-chart="duration"]');
    await chart.getByRole('img', { name: 'Duration of each run in staging' }).waitFor();
    assert.match(
      (await chart.locator('.chart-summary').textContent()) ?? '',
      /^4 runs in staging from .+ to .+: median .+, fastest .+, slowest .+; 1 passed, 0 passed after a retry, 3 failed\. The newest took .+ and failed\.$/,
    );
    // One point per run, its shape saying how it ended.
    assert.equal(await chart.locator('[data-shape="circle"]').count(), 1 + 1, 'the pass, and the legend');
    assert.equal(await chart.locator('[data-shape="cross"]').count(), 3 + 1, 'the failures, and the legend');
    await chart.getByText('As a table').click();
    assert.equal(await chart.locator('details tbody tr').count(), 4);

    const failures = page.locator('ul.recent-failures > li');
    assert.equal(await failures.count(), 3);
    assert.equal(await failures.first().locator('pre').textContent(), 'exited with code 2');
    assert.equal(await failures.first().getAttribute('data-run'), await firstFailedRun(sets[3]!, 'search'));
  });

  async function firstFailedRun(setId: string, name: string): Promise<string> {
    const members = await api<{ testRuns: { id: string; name: string }[] }>(server, 'GET', `/v0/test-run-sets/${setId}/test-runs`);
    return members.body.testRuns.find((m) => m.name === name)!.id;
  }
});
