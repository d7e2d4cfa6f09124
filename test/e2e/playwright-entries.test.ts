/**
 * One Playwright suite serving two entries — a smoke `grep` for prod, all of it
 * for staging — through the real server and a real Playwright run: each
 * environment's sets hold that entry's cases, under the suite's own names while
 * the environments are disjoint, under `entry › …` where both entries apply to
 * one environment; and every member runs. The cases need no browser: what is
 * proven is which cases each entry lists and runs, under which names (a browser
 * run is proven by ./playwright.test.ts), so no Chromium is started.
 *
 * Both configurations are one server's: the disjoint pair in prod/staging, the
 * overlapping pair in canary/preview (the naming rule is per environment, so the
 * two pairs, sharing none, cannot change each other's names), and all four sets
 * run at once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet } from '../helpers/server.js';
import type { PlaywrightMember } from './playwright-fixtures.js';

after(() => assertNoLeakedServers());

const SPEC = `
import { test, expect } from '@playwright/test';
test('home shows a title @smoke', async () => {
  expect('<h1>Shop</h1>').toContain('Shop');
});
test('checkout', async () => {
  expect('<button>Pay</button>').toContain('Pay');
});
`;

const SMOKE = ['shop.spec.ts › home shows a title @smoke'];
const ALL = ['shop.spec.ts › home shows a title @smoke', 'shop.spec.ts › checkout'];


const ENVS = ['prod', 'staging', 'canary', 'preview'] as const;
type Env = (typeof ENVS)[number];

/** Both configurations in one file (see above); returns its path. */
function writeConfig(): string {
  const dir = tempDir('runset-pw-entries-');
  mkdirSync(path.join(dir, 'suite', 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'suite', 'playwright.config.ts'), "export default { testDir: 'tests', timeout: 15_000 };\n");
  writeFileSync(path.join(dir, 'suite', 'tests', 'shop.spec.ts'), SPEC);
  const file = path.join(dir, 'runset.config.yaml');
  writeFileSync(file, `environments:\n${ENVS.map((e) => `  ${e}: { variables: {} }\n`).join('')}tests:
  - { name: smoke, type: playwright, dir: suite, grep: "@smoke", environments: [prod] }
  - { name: full, type: playwright, dir: suite, environments: [staging] }
  - { name: quick, type: playwright, dir: suite, grep: "@smoke", environments: [canary, preview] }
  - { name: whole, type: playwright, dir: suite, environments: [preview] }
`);
  return file;
}

type Members = Record<Env, Array<Pick<PlaywrightMember, 'name' | 'status'>>>;

/** Creates a set in each environment at once, waits for all, and returns each one's members (name and status). */
async function runEach(configPath: string): Promise<Members> {
  const server = await startRunset({ configPath, args: ['--workers', '2'] });
  try {
    const ids = await Promise.all(ENVS.map(async (env) => (await api(server, 'POST', '/v0/test-run-sets', { body: { env } })).body.testRunSetId as string));
    const out = {} as Members;
    for (const [index, env] of ENVS.entries()) {
      const id = ids[index]!;
      const done = await waitForSet(server, id, 90_000);
      const members = (await api<{ testRuns: PlaywrightMember[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
      assert.equal(done.status, 'SUCCESS', JSON.stringify(members.map((m) => [m.name, m.status, m.error])));
      out[env] = members.map((m) => ({ name: m.name, status: m.status }));
    }
    return out;
  } finally {
    await server.stop();
  }
}

const passed = (names: string[]) => names.map((name) => ({ name, status: 'SUCCESS' }));

describe('two entries over one Playwright suite', () => {
  let members: Members;
  before(async () => {
    members = await runEach(writeConfig());
  });

  test('in disjoint environments: each set holds its entry\'s cases under the suite\'s own names, and runs them', () => {
    assert.deepEqual(members.prod, passed(SMOKE));
    assert.deepEqual(members.staging, passed(ALL));
  });

  test('both in one environment: every case is named after its entry, and that set runs both entries\' cases', () => {
    assert.deepEqual(members.canary, passed(SMOKE.map((n) => `quick › ${n}`)));
    assert.deepEqual(members.preview, passed([...SMOKE.map((n) => `quick › ${n}`), ...ALL.map((n) => `whole › ${n}`)]));
  });
});
