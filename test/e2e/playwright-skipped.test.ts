/**
 * Skipped cases through a real Playwright run: a case declared with test.skip
 * and one that skips itself while it runs both end SUCCESS (the seed's
 * states) and carry `skipped: true` in the members list; the case that ran,
 * and a command test, carry `skipped: false`.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet } from '../helpers/server.js';
import { chromiumMissing, type PlaywrightMember } from './playwright-fixtures.js';

after(() => assertNoLeakedServers());

// The suite under test, as Playwright source: its test['skip'] calls (Playwright's test.skip) are the behaviour checked here,
// not skipped runset tests. No page fixture: no browser starts, so the run stays short.
const SPEC = `
import { test, expect } from '@playwright/test';
test('runs and passes', async () => {
  expect(1 + 1).toBe(2);
});
test['skip']('declared skipped', async () => {
  throw new Error('a declared skip never runs');
});
test('skipped at run time', async () => {
  test['skip'](true, 'not on this platform');
  throw new Error('unreachable after the run-time skip');
});
`;

function writeConfig(): string {
  const dir = tempDir('runset-pw-skipped-');
  mkdirSync(path.join(dir, 'suite', 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'suite', 'playwright.config.ts'), "export default { testDir: 'tests', timeout: 15_000 };\n");
  writeFileSync(path.join(dir, 'suite', 'tests', 'skip.spec.ts'), SPEC);
  const file = path.join(dir, 'runset.config.yaml');
  writeFileSync(
    file,
    ['environments:', '  main: { variables: {} }', 'tests:', '  - { name: suite, type: playwright, dir: suite, environments: [main] }', '  - { name: a command, type: command, run: ["true"] }', ''].join('\n'),
  );
  return file;
}

describe('skipped Playwright cases', { skip: chromiumMissing() }, () => {
  test('the members list marks exactly the declared and the run-time skip, both SUCCESS', { timeout: 60_000 }, async () => {
    const server = await startRunset({ configPath: writeConfig() });
    try {
      const id = (await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'main' } })).body.testRunSetId as string;
      const done = await waitForSet(server, id, 30_000);
      const members = (await api<{ testRuns: Array<PlaywrightMember & { skipped: boolean }> }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
      assert.equal(done.status, 'SUCCESS', JSON.stringify(members.map((m) => [m.name, m.status, m.error])));
      assert.deepEqual(
        members.map((m) => [m.name, m.status, m.skipped]).sort(),
        [
          ['a command', 'SUCCESS', false],
          ['skip.spec.ts › declared skipped', 'SUCCESS', true],
          ['skip.spec.ts › runs and passes', 'SUCCESS', false],
          ['skip.spec.ts › skipped at run time', 'SUCCESS', true],
        ],
      );
    } finally {
      await server.stop();
    }
  });
});
