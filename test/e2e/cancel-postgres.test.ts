/**
 * Cancel across machines, on PostgreSQL: an API process (`serve --no-workers`)
 * cancels a set whose Playwright batch a separate `runset worker` runs, with a
 * real browser open. The worker hears of it through the store and stops the
 * batch: within 2 s the set has ended, and no process of the batch — the
 * Playwright runner, its workers, Chromium — is left in the process table.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, tempDir } from '../helpers/server.js';
import { taggedProcesses } from '../helpers/fleet.js';
import { fleetOnFreshSchema, NO_DATABASE, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { createSet, listMembers, until } from '../helpers/scale.js';
import { chromiumMissing } from './playwright-fixtures.js';

const SKIP = !TEST_DATABASE_URL ? NO_DATABASE : chromiumMissing();

const SPEC = `
const { test } = require('@playwright/test');
test('holds a browser open', async ({ page }) => {
  await page.setContent('<p>waiting to be cancelled</p>');
  await new Promise((r) => setTimeout(r, 60_000));
});
test('waits its turn', async () => {});
`;

test('an API process cancels a Playwright batch another machine runs: it stops within 2 s, browsers and all', { skip: SKIP, timeout: 120_000 }, async (t) => {
  const dir = tempDir('runset-cancel-pg-');
  mkdirSync(path.join(dir, 'suite', 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'suite', 'playwright.config.js'), "module.exports = { testDir: 'tests', timeout: 90_000 };\n");
  writeFileSync(path.join(dir, 'suite', 'tests', 'hold.spec.js'), SPEC);
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, 'environments:\n  e2e: {}\ntests:\n  - { name: suite, type: playwright, dir: suite, workers: 1, timeoutSeconds: 120 }\n');
  const { fleet } = fleetOnFreshSchema(t, 'runset_cancel', configPath, dir);

  const server = await fleet.api();
  const worker = await fleet.worker(2);
  const own = new Set([server.pid, worker.pid]);
  const batch = () => taggedProcesses(fleet.tag).filter((p) => !own.has(p.pid));
  const id = await createSet(server, 'e2e');
  await until('the browser is open', () => batch().some((p) => /chrom/i.test(p.cmdline)), 60_000);
  // The member turns RUNNING when runset's reporter tells of its test's begin, a moment after the browser starts.
  await until('a member is RUNNING', async () => (await listMembers(server, id)).some((m) => m.status === 'RUNNING'), 10_000);

  const cancelled = await api<{ status: string; cancelled: boolean }>(server, 'POST', `/v0/test-run-sets/${id}/cancel`);
  const at = Date.now();
  assert.equal(cancelled.status, 200, cancelled.text);
  assert.deepEqual([cancelled.body.status, cancelled.body.cancelled], ['FAIL', true]);
  await until('no process of the batch is left', () => batch().length === 0, 2000, 25).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}: ${JSON.stringify(batch())}`);
  });
  t.diagnostic(`the batch's processes were gone ${Date.now() - at} ms after the cancel answered`);
  const members = await listMembers(server, id);
  assert.deepEqual(members.map((m) => [m.status, m.error]), [
    ['FAIL', 'cancelled'],
    ['FAIL', 'cancelled'],
  ]);
  assert.ok(worker.running, 'the worker lives on');
  await worker.stop();
  await server.stop();
});
