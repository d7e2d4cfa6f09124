/**
 * The fan-out views in Chromium: a set's timeline (lanes per worker slot, bars
 * labelled and linked, readable at 500 members) and the Workers page, against
 * the real server. HTTP checks against a local server keep 500 members fast.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { api, startRunset, waitForSet, type RunningServer } from '../helpers/server.js';
import { chromiumMissing, ensureDashboardBuilt, openSignedIn } from '../helpers/dashboard.js';

const MEMBERS = 500;

function config(): string {
  const checks = Array.from({ length: MEMBERS - 2 }, (_, i) => `  - name: check ${String(i + 1).padStart(3, '0')}\n    type: http\n    request: { url: "{{BASE_URL}}/ok" }\n`);
  return `
environments:
  staging:
    variables:
      BASE_URL: http://127.0.0.1:1
tests:
  - name: long pole
    type: http
    request: { url: "{{BASE_URL}}/slow" }
  - name: broken page
    type: http
    request: { url: "{{BASE_URL}}/missing" }
    expect: { status: 200 }
${checks.join('')}`;
}

const skip = chromiumMissing();

describe('fan-out views in Chromium', { skip }, () => {
  let target: Server;
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let setId: string;

  before(async () => {
    target = createServer((req, res) => {
      if (req.url === '/slow') setTimeout(() => res.end('ok'), 1500);
      else res.writeHead(req.url === '/ok' ? 200 : 404).end();
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    await ensureDashboardBuilt();
    server = await startRunset({ config: config(), args: ['--workers', '4'] });
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', envOverride: { BASE_URL: base } } });
    assert.equal(created.status, 200, created.text);
    setId = created.body.testRunSetId as string;
    await waitForSet(server, setId, 60_000);

    ({ browser, page } = await openSignedIn(server));
  });
  after(async () => {
    await browser?.close();
    assert.equal(await server.stop(), 0);
    await new Promise((resolve) => target.close(resolve));
  });

  test('a set of 500 members draws every member as a bar in at most 4 lanes, failures marked in text', async () => {
    await page.goto(`/sets/${setId}`);
    const timeline = page.locator('figure.timeline');
    await timeline.waitFor();
    assert.equal(await timeline.locator('a.tl-bar').count(), MEMBERS);
    const lanes = await timeline.locator('.timeline-lane').count();
    assert.ok(lanes >= 1 && lanes <= 4, `one lane per busy slot of the one worker (4 slots), got ${lanes}`);
    assert.match((await timeline.locator('figcaption').textContent()) ?? '', new RegExp(`^${MEMBERS} members on ${lanes} slots of 1 worker over`));

    const failed = timeline.locator('a.tl-bar[data-member="broken page"]');
    assert.match((await failed.getAttribute('title')) ?? '', /^broken page: FAIL, /);
    assert.match((await failed.textContent()) ?? '', /^✗ broken page/);
    // For screen readers and the keyboard, the members table carries the same: no 500 extra stops before it.
    assert.equal(await timeline.locator('.timeline-scroll').getAttribute('aria-hidden'), 'true');
    assert.equal(await failed.getAttribute('tabindex'), '-1');
    // Its links for them: the failures by cause and the members table; the bar is not one.
    assert.equal(await page.getByRole('link', { name: 'broken page' }).count(), 2);

    // The long pole is the widest bar and its name is visible; narrow bars still fit the page (the track scrolls).
    // Against the median check, not one: on a loaded machine any single quick check may have waited long.
    const pole = await timeline.locator('a.tl-bar[data-member="long pole"]').boundingBox();
    const widths = (await page.evaluate<number[]>("[...document.querySelectorAll('figure.timeline a.tl-bar')].map((bar) => bar.getBoundingClientRect().width)")).sort((a, b) => a - b);
    const median = widths[Math.floor(widths.length / 2)]!;
    assert.ok(pole && pole.width > median * 5, `long pole ${pole?.width}px vs the median check ${median}px`);
    assert.ok(pole.width >= 60, 'wide enough to read its name');
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    assert.ok(overflow <= 1, 'the page itself does not scroll sideways');
  });

  test('a bar is a link to its member, whose page names the worker', async () => {
    await page.goto(`/sets/${setId}`);
    await page.locator('a.tl-bar[data-member="long pole"]').click();
    await page.getByRole('heading', { name: /long pole/ }).waitFor();
    const worker = page.locator('dt', { hasText: 'Worker' }).locator('xpath=following-sibling::dd[1]');
    assert.match((await worker.textContent()) ?? '', /\/\d+\//);
  });

  test('the Workers page lists the serve process and its slots', async () => {
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workers' }).click();
    await page.getByRole('heading', { name: 'Workers' }).waitFor();
    await page.getByText(/1 live worker, 0 of 4 slots busy/).waitFor();
    const row = page.locator('tr[data-worker]');
    assert.equal(await row.count(), 1);
    assert.match((await row.locator('td[data-label="Busy"]').textContent()) ?? '', /0 of 4/);
    assert.match((await row.locator('td[data-label="Running"]').textContent()) ?? '', /idle/);
  });
});
