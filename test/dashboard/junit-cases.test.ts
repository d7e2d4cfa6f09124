/**
 * A `junit:` command's member page in Chromium: its report's three cases in a
 * table (name, status, duration, error), each case that ran linked to its own
 * test page, which shows that case's history.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { api, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { chromiumMissing, ensureDashboardBuilt, openSignedIn } from '../helpers/dashboard.js';
import { junitCommandEntry } from '../e2e/junit-fixtures.js';

const skip = chromiumMissing();
let server: RunningServer;
let browser: Browser;
let page: Page;
let setId: string;
let runId: string;

before(async () => {
  if (skip) return;
  await ensureDashboardBuilt();
  server = await startRunset({
    config: ['environments:', '  e2e: { variables: { TOKEN: "${env:JUNIT_TEST_TOKEN}" } }', 'tests:', junitCommandEntry('api', tempDir('runset-junit-page-')), ''].join('\n'),
    env: { JUNIT_TEST_TOKEN: 's3cret-value' },
  });
  const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'e2e' } });
  assert.equal(created.status, 200, created.text);
  setId = created.body.testRunSetId as string;
  await waitForSet(server, setId, 60_000);
  runId = (await api<{ testRuns: Array<{ id: string }> }>(server, 'GET', `/v0/test-run-sets/${setId}/test-runs`)).body.testRuns[0]!.id;
  ({ browser, page } = await openSignedIn(server));
});
after(async () => {
  if (skip) return;
  await browser?.close();
  assert.equal(await server.stop(), 0);
});

test("a junit: member's page lists its cases, and a case links to its own history", { skip, timeout: 60_000 }, async () => {
  await page.goto(`/sets/${setId}/runs/${runId}`);
  await page.getByRole('heading', { name: 'Cases' }).waitFor();
  assert.match((await page.locator('table.cases-table').locator('xpath=preceding-sibling::p[1]').textContent()) ?? '', /3 in its JUnit report: 1 passed, 1 failed, 1 skipped/);
  const rows = page.locator('tr[data-case]');
  const cells = await Promise.all(
    (await rows.all()).map(async (row) => (await row.locator('td').allTextContents()).map((t) => t.trim())),
  );
  assert.deepEqual(cells, [
    ['api.Users › creates a user', 'passed', '12 ms', '—'],
    ['api.Users › rejects a duplicate', 'failed', '400 ms', 'expected 409, got 200 for token ***'],
    ['api.Users › is pending', 'skipped', '0 ms', '—'],
  ]);
  assert.equal(await rows.nth(2).getByRole('link').count(), 0, 'a skipped case has no history to link to');
  await rows.nth(1).getByRole('link', { name: 'api.Users › rejects a duplicate' }).click();
  await page.waitForURL(/\/test\?env=e2e&name=/);
  await page.getByRole('heading', { name: 'api › api.Users › rejects a duplicate' }).waitFor();
  await page.getByText('expected 409, got 200 for token ***').first().waitFor();
  assert.ok(await page.locator(`a[href="/sets/${setId}/runs/${runId}"]`).count() > 0, 'its run links back to the member');
});
