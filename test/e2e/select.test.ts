/**
 * Selection on create over real HTTP (src/sets/select.ts): a create's `select`
 * plans only the tests it keeps (http, command and, where Chromium is here, a
 * Playwright case by its own tag and project); it is in the set's details, kept
 * by "run again", part of idempotency's body comparison; a selection keeping
 * nothing is 422 no_tests_selected, a bad pattern 400; `runset trigger`'s
 * flags send it. The server runs no workers: what is checked is the plan.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, type RunningServer } from '../helpers/server.js';
import { runTriggerCommand } from '../../src/cli/trigger.js';
import { chromiumMissing, writeShopSuite } from './playwright-fixtures.js';

const withPlaywright = chromiumMissing() === false;

const PLAYWRIGHT_ENTRY = `
  - { name: ui, type: playwright, dir: suite }`;

const SPEC = `
import { test } from '@playwright/test';
test('checkout pays @smoke', async () => {});
test('search finds', { tag: '@slow' }, async () => {});
`;

function writeConfig(): string {
  const dir = tempDir('runset-select-e2e-');
  if (withPlaywright) writeShopSuite(dir, SPEC);
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(
    configPath,
    `
environments:
  staging:
    variables: { BASE_URL: "http://127.0.0.1:9" }
tests:
  - { name: api health, type: http, request: { url: "{{BASE_URL}}/health" }, tags: [smoke, api] }
  - { name: api checkout, type: http, request: { url: "{{BASE_URL}}/checkout" }, tags: [api] }
  - { name: db migrate, type: command, run: [node, -e, "0"], tags: [db] }
  - { name: slow report, type: command, run: [node, -e, "0"], tags: [smoke] }${withPlaywright ? PLAYWRIGHT_ENTRY : ''}
`,
  );
  return configPath;
}

interface Problem {
  code: string;
  detail: string;
}

describe('selection on create', () => {
  let server: RunningServer;
  before(async () => {
    server = await startRunset({ configPath: writeConfig(), args: ['--no-workers'] });
  });
  after(async () => {
    await server.stop();
    assertNoLeakedServers();
  });

  const create = (body: unknown, headers: Record<string, string> = {}) => api<{ testRunSetId: string } & Problem>(server, 'POST', '/v0/test-run-sets', { body, headers });
  const members = async (id: string) => {
    const listed = await api<{ testRuns: Array<{ name: string }> }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`);
    // Once seen under npm test's load: an answer without testRuns. Its status and body say why.
    assert.equal(listed.status, 200, listed.text);
    return listed.body.testRuns.map((r) => r.name).sort();
  };
  const selectOf = async (id: string) => (await api<{ select: unknown }>(server, 'GET', `/v0/test-run-sets/${id}/details`)).body.select;

  test('each field plans only what it keeps; details show it; run again keeps it', async () => {
    const smoke = await create({ env: 'staging', select: { tags: ['@smoke'] } });
    assert.equal(smoke.status, 200, smoke.text);
    const smokeNames = ['api health', 'slow report', ...(withPlaywright ? ['shop.spec.ts › checkout pays @smoke'] : [])].sort();
    assert.deepEqual(await members(smoke.body.testRunSetId), smokeNames);
    assert.deepEqual(await selectOf(smoke.body.testRunSetId), { tags: ['@smoke'] });

    const combined = { tags: ['smoke', 'api'], grep: '^api|slow', grepInvert: 'health' };
    const both = await create({ env: 'staging', select: combined });
    assert.deepEqual(await members(both.body.testRunSetId), ['api checkout', 'slow report'], 'the fields AND together');
    const named = await create({ env: 'staging', select: { names: ['db migrate'] } });
    assert.deepEqual(await members(named.body.testRunSetId), ['db migrate']);

    const again = await api<{ testRunSetId: string }>(server, 'POST', `/v0/test-run-sets/${both.body.testRunSetId}/rerun`);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(await selectOf(again.body.testRunSetId), combined);
    assert.deepEqual(await members(again.body.testRunSetId), ['api checkout', 'slow report']);

    const all = await create({ env: 'staging' });
    assert.equal(await selectOf(all.body.testRunSetId), null);
  });

  test('Playwright cases by their own tag (tag: annotation) and project', { skip: withPlaywright ? false : chromiumMissing() || true }, async () => {
    const slow = await create({ env: 'staging', select: { tags: ['slow'] } });
    assert.deepEqual(await members(slow.body.testRunSetId), ['shop.spec.ts › search finds']);
    const chromium = await create({ env: 'staging', select: { projects: ['chromium'] } });
    assert.deepEqual(await members(chromium.body.testRunSetId), ['shop.spec.ts › checkout pays @smoke', 'shop.spec.ts › search finds']);
  });

  test('nothing selected is 422; a bad pattern or field 400; the selection is part of idempotency', async () => {
    const none = await create({ env: 'staging', select: { tags: ['nightly'] } });
    assert.equal(none.status, 422);
    assert.equal(none.body.code, 'no_tests_selected');
    assert.match(none.body.detail, new RegExp(`select tags "nightly" matches none of the ${withPlaywright ? 6 : 4} tests environment "staging" has`));

    const bad = await create({ env: 'staging', select: { grep: '(unclosed' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'invalid_body');
    assert.match(bad.body.detail, /^select\.grep is not a valid JavaScript regular expression/);
    const unknown = await create({ env: 'staging', select: { tag: ['smoke'] } });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.code, 'unknown_field');
    assert.match(unknown.body.detail, /body\.select: unknown field "tag"/);
    const empty = await create({ env: 'staging', select: {} });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.code, 'invalid_body');
    assert.match(empty.body.detail, /^select is empty: it must hold at least one of tags, grep, grepInvert, names or projects/);
    const long = await create({ env: 'staging', select: { grep: 'a'.repeat(257) } });
    assert.equal(long.body.code, 'invalid_body');
    assert.match(long.body.detail, /select\.grep must NOT have more than 256 characters/);

    const headers = { 'idempotency-key': `select-${Date.now()}` };
    const first = await create({ env: 'staging', select: { tags: ['db'] } }, headers);
    const replay = await create({ env: 'staging', select: { tags: ['db'] } }, headers);
    assert.equal(replay.body.testRunSetId, first.body.testRunSetId);
    const other = await create({ env: 'staging', select: { tags: ['api'] } }, headers);
    assert.equal(other.status, 422);
    assert.equal(other.body.code, 'idempotency_conflict');
  });

  test('runset trigger --tag --grep --grep-invert --test --project send the selection', async () => {
    const run = async (argv: string[]) => {
      let out = '';
      let err = '';
      const io = { stdout: { write: (t: string) => ((out += t), true) }, stderr: { write: (t: string) => ((err += t), true) } };
      const code = await runTriggerCommand(['--env', 'staging', '--no-ci-labels', ...argv], { RUNSET_URL: server.url, RUNSET_API_KEY: server.apiKey }, io);
      return { code, out: out.trim(), err };
    };
    const r = await run(['--tag', 'smoke', '--tag', 'db', '--grep', 'e', '--grep-invert', 'health', '--test', 'slow report', '--test', 'db migrate']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(await selectOf(r.out), { tags: ['smoke', 'db'], grep: 'e', grepInvert: 'health', names: ['slow report', 'db migrate'] });
    assert.deepEqual(await members(r.out), ['db migrate', 'slow report']);

    const projects = await run(['--project', 'webkit']);
    assert.equal(projects.code, 3);
    assert.match(projects.err, /no_tests_selected|matches none/);
  });
});
