/**
 * Rerun of failures with a Playwright suite, on SQLite, through real workers
 * and a real Playwright: after a set where one Playwright case fails, a
 * command fails and a slow command is cancelled, `{"only": "failed"}` plans
 * exactly those three (the passing case and command are not run again), and
 * the rerun's Playwright member runs its case alone.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { chromiumMissing, writeShopSuite } from './playwright-fixtures.js';

const skip = chromiumMissing();

const SPEC = `
import { test, expect } from '@playwright/test';
test('cart keeps items', async () => { expect(1 + 1).toBe(2); });
test('checkout pays', async () => { expect('declined').toBe('paid'); });
`;

function writeSuite(): string {
  const dir = tempDir('runset-rerun-pw-');
  writeShopSuite(dir, SPEC);
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(
    configPath,
    `
environments:
  staging: {}
tests:
  - { name: ui, type: playwright, dir: suite }
  - { name: passes, type: command, run: [node, -e, "0"] }
  - { name: fails, type: command, run: [node, -e, "process.exit(3)"] }
  - { name: hangs, type: command, run: [node, -e, "setTimeout(() => {}, 60000)"], timeoutSeconds: 120 }
`,
  );
  return configPath;
}

type Member = { name: string; status: string; error: string | null };

describe('rerun of failures with a Playwright suite', { skip }, () => {
  let server: RunningServer | undefined;
  after(async () => {
    await server?.stop();
    assertNoLeakedServers();
  });

  test('exactly the failing case, the failing command and the cancelled one run again', { timeout: 120_000 }, async () => {
    server = await startRunset({ configPath: writeSuite(), args: ['--workers', '2'] });
    const members = async (id: string) =>
      (await api<{ testRuns: Member[] }>(server!, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns.sort((a, b) => a.name.localeCompare(b.name));
    const first = (await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' } })).body.testRunSetId;
    // Cancel once everything but the hanging command has ended.
    for (let i = 0; i < 600; i++) {
      const ended = (await members(first)).filter((m) => m.status === 'SUCCESS' || m.status === 'FAIL').length;
      if (ended === 4) break;
      await sleep(100);
    }
    await api(server, 'POST', `/v0/test-run-sets/${first}/cancel`);
    assert.deepEqual(
      (await members(first)).map((m) => [m.name, m.status]),
      [
        ['fails', 'FAIL'],
        ['hangs', 'FAIL'],
        ['passes', 'SUCCESS'],
        ['shop.spec.ts › cart keeps items', 'SUCCESS'],
        ['shop.spec.ts › checkout pays', 'FAIL'],
      ],
    );
    const rerun = await api<{ testRunSetId: string }>(server, 'POST', `/v0/test-run-sets/${first}/rerun`, { body: { only: 'failed' } });
    assert.equal(rerun.status, 200, rerun.text);
    const again = rerun.body.testRunSetId;
    assert.deepEqual((await members(again)).map((m) => m.name), ['fails', 'hangs', 'shop.spec.ts › checkout pays']);
    let rerunCase: Member | undefined;
    for (let i = 0; i < 600 && rerunCase?.status !== 'FAIL'; i++) {
      rerunCase = (await members(again)).find((m) => m.name === 'shop.spec.ts › checkout pays');
      if (rerunCase?.status !== 'FAIL') await sleep(100);
    }
    assert.match(rerunCase?.error ?? '', /toBe/, 'the case ran again and failed in its own words, not by the cancel');
    await api(server, 'POST', `/v0/test-run-sets/${again}/cancel`);
    assert.equal((await waitForSet(server, again)).status, 'FAIL');
  });
});
