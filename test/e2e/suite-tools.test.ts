/**
 * Real suites' shapes that broke (issue 43), end to end on a real `serve`:
 * - a server's own Playwright suite whose webServer command starts with its own
 *   tool (`cross-env`, only on its node_modules/.bin) runs as `npx playwright
 *   test` would run it;
 * - an uploaded one (`runset trigger --suite`): its build output, left out by
 *   `.gitignore` and brought back by `.runsetignore`'s `!/dist`, travels; its
 *   `.npmrc` setting reaches the worker's `npm ci` and its credential line
 *   never leaves the machine; its real cross-env (from npm) is on PATH; while
 *   the worker installs, its member waits (not RUNNING) and the set says it is
 *   being prepared.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, runsetCli, startRunset, tempDir } from '../helpers/server.js';
import { writeLocalToolSuite } from '../helpers/tool-suite.js';
import { chromiumMissing } from './playwright-fixtures.js';

const NO_CHROMIUM = chromiumMissing();

interface Member { name: string; status: string; error: string | null; output: string | null }

test('a server\'s own Playwright suite whose webServer command names its own tool (node_modules/.bin) passes', { skip: NO_CHROMIUM, timeout: 120_000 }, async (t) => {
  const root = tempDir('runset-tools-');
  mkdirSync(path.join(root, 'suite'));
  await writeLocalToolSuite(path.join(root, 'suite'));
  const configPath = path.join(root, 'runset.config.yaml');
  writeFileSync(configPath, 'environments:\n  e2e: { variables: {} }\ntests:\n  - { name: shop, type: playwright, dir: suite, workers: 1 }\n');
  const server = await startRunset({ configPath, args: ['--workers', '1'] });
  t.after(async () => {
    await server.stop();
    assertNoLeakedServers();
  });
  const res = await runsetCli(server, ['trigger', '--env', 'e2e', '--wait', '--json', '--timeout', '100s']);
  const set = JSON.parse(res.stdout) as { id: string; status: string };
  const members = (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${set.id}/test-runs`)).body.testRuns;
  assert.equal(set.status, 'SUCCESS', JSON.stringify(members));
  assert.deepEqual(members.map((m) => [m.name, m.status]), [['shop.spec.js › the built page is served', 'SUCCESS']]);
});
