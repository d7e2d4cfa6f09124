/**
 * An environment's page in Chromium shows its running and queued sets, oldest
 * first, each linked, with its place in the queue (maxConcurrentSets 1, three
 * sets of a long test: one runs, two wait).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { api, startRunset, type RunningServer } from '../helpers/server.js';
import { chromiumMissing, ensureDashboardBuilt, openSignedIn } from '../helpers/dashboard.js';

const CONFIG = `
environments:
  shared: { maxConcurrentSets: 1 }
tests:
  - { name: long, type: command, run: [sh, -c, 'sleep 60'] }
`;

const skip = chromiumMissing();
let server: RunningServer;
let browser: Browser;
let page: Page;
const ids: string[] = [];

before(async () => {
  if (skip) return;
  await ensureDashboardBuilt();
  server = await startRunset({ config: CONFIG, args: ['--workers', '2'] });
  for (let i = 0; i < 3; i++) {
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'shared' } });
    assert.equal(created.status, 200, created.text);
    ids.push(created.body.testRunSetId as string);
  }
  ({ browser, page } = await openSignedIn(server));
});
after(async () => {
  if (skip) return;
  await browser?.close();
  for (const id of ids) await api(server, 'POST', `/v0/test-run-sets/${id}/cancel`);
  assert.equal(await server.stop(), 0);
});

test("an environment's page lists its running and queued sets with their places", { skip, timeout: 60_000 }, async () => {
  // The first set's member starts within moments; until then it waits for a worker.
  for (let tries = 0; ; tries++) {
    await page.goto('/environments/shared');
    await page.getByRole('heading', { name: 'Running and queued' }).waitFor();
    if ((await page.locator(`tr[data-set="${ids[0]}"]`).textContent())?.includes('running')) break;
    assert.ok(tries < 50, 'the first set started');
    await new Promise((r) => setTimeout(r, 200));
  }
  const rows = page.locator('tr[data-set]');
  assert.deepEqual(await Promise.all((await rows.all()).map((r) => r.getAttribute('data-set'))), ids, 'oldest first: the queue order');
  assert.match((await rows.nth(1).textContent()) ?? '', /queued, next/);
  assert.match((await rows.nth(2).textContent()) ?? '', /queued, 2 sets ahead/);
  assert.equal(await rows.nth(2).getAttribute('data-queue'), '2');
  await rows.nth(2).getByRole('link').click();
  await page.waitForURL(`**/sets/${ids[2]}`);
});
