/**
 * runset's hang guard on a real suite shaped like the one that broke (issue 43,
 * item 2): a `setup` project the tests depend on, which writes the data they
 * use; a config timeout of 1 s; a test that raises its own timeout to 30 s and
 * takes 14 s (past the old guard's 3 × 1 s + 10 s); then a test stuck in a
 * blocking call (as a busy loop is stuck, without burning a core for the
 * guard's 12 s), where Playwright's own timer cannot reach it; then one
 * waiting its turn.
 * The first passes on its own terms, the second is killed by the guard, named
 * as such, and the third fails saying why it is not run again, rather than a
 * new Playwright run silently seeding the data a second time.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet } from '../helpers/server.js';
import { chromiumMissing, type PlaywrightMember } from './playwright-fixtures.js';

after(() => assertNoLeakedServers());

const CONFIG = `
export default {
  testDir: 'tests',
  timeout: 1000,
  workers: 1,
  projects: [
    { name: 'setup', testMatch: /seed\\.setup\\.ts/ },
    { name: 'app', testMatch: /shop\\.spec\\.ts/, dependencies: ['setup'] },
  ],
};
`;

const SEED = `
import { test } from '@playwright/test';
import { appendFileSync } from 'node:fs';
test('seed the shop', async () => {
  // Wipes and seeds what the app tests read: running it twice is what must not happen unseen.
  appendFileSync(process.env.SEED_LOG!, 'seeded\\n');
});
`;

const SHOP = `
import { test, expect } from '@playwright/test';
// No browser: launching one counts against the 1 s the config gives before the test's own
// setTimeout runs, and on a loaded machine that alone can take longer.
test('raises its own timeout', async () => {
  test.setTimeout(30_000);
  console.log('waiting for the slow report');
  await new Promise((r) => setTimeout(r, 14_000));
  expect('Shop').toBe('Shop');
});
test('blocks forever', async () => {
  console.log('about to block');
  // Stuck as a busy loop is, where Playwright's own timer cannot run, without burning a core until the guard acts.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
});
test('waits its turn', async () => {});
`;

function writeGuardSuite(): { dir: string; seedLog: string } {
  const dir = tempDir('runset-pw-guard-');
  mkdirSync(path.join(dir, 'suite', 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'suite', 'playwright.config.ts'), CONFIG);
  writeFileSync(path.join(dir, 'suite', 'tests', 'seed.setup.ts'), SEED);
  writeFileSync(path.join(dir, 'suite', 'tests', 'shop.spec.ts'), SHOP);
  const seedLog = path.join(dir, 'seed.log');
  writeFileSync(path.join(dir, 'runset.config.yaml'), `
environments:
  local: { variables: { SEED_LOG: "${seedLog}" } }
tests:
  - { name: shop, type: playwright, dir: suite, workers: 1 }
`);
  return { dir, seedLog };
}

test('a test within its own raised timeout is never killed; a real hang is, by the guard, and setup is not silently run again', { skip: chromiumMissing() }, async () => {
  const { dir, seedLog } = writeGuardSuite();
  const server = await startRunset({ configPath: path.join(dir, 'runset.config.yaml'), args: ['--workers', '1'] });
  try {
    const id = (await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'local' } })).body.testRunSetId as string;
    const done = await waitForSet(server, id, 120_000);
    assert.equal(done.status, 'FAIL');
    const members = (await api<{ testRuns: PlaywrightMember[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
    const byName = new Map(members.map((m) => [m.name.replace(/^\[\w+\] › /, ''), m]));
    const raised = byName.get('shop.spec.ts › raises its own timeout')!;
    assert.equal(raised.status, 'SUCCESS', `${raised.error}\n${raised.output}`);
    assert.equal(raised.attempts, 1);
    assert.match(raised.output ?? '', /waiting for the slow report/);

    const stuck = byName.get('shop.spec.ts › blocks forever')!;
    assert.equal(stuck.status, 'FAIL');
    assert.match(stuck.error ?? '', /^hung: runset's hang guard killed Playwright and its browsers \d+s after the test began, past its timeout of 1s and its teardown, with no sign of life from its Playwright worker for \d+s/);
    assert.match(stuck.output ?? '', /about to block/, 'what it streamed before it hung');

    const waiting = byName.get('shop.spec.ts › waits its turn')!;
    assert.equal(waiting.status, 'FAIL');
    assert.match(waiting.error ?? '', /^not run to its end: another test of the same Playwright run, \[app\] › shop\.spec\.ts › blocks forever, hung, and runset's hang guard stopped the run; runset does not start it again, since a new Playwright run would run the setup project "setup" again/);
    assert.equal(byName.get('seed.setup.ts › seed the shop')?.status, 'SUCCESS');
    assert.equal(readFileSync(seedLog, 'utf8'), 'seeded\n', 'the setup project ran once');
  } finally {
    await server.stop();
  }
});
