/**
 * Real suites' shapes that broke (issue 43), end to end on a real `serve`:
 * - a server's own Playwright suite whose webServer command starts with its own
 *   tool (`cross-env`, only on its node_modules/.bin) runs as `npx playwright
 *   test` would run it;
 * - an uploaded one (`runset suites push`): its build output, left out by
 *   `.gitignore` and brought back by `.runsetignore`'s `!/dist`, travels; its
 *   `.npmrc` setting reaches the worker's `npm ci` and its credential line
 *   never leaves the machine; its real cross-env (from npm) is on PATH; while
 *   the worker installs, its member waits (not RUNNING) and the set says it is
 *   being prepared. Its npm ci reaches the npm registry (cross-env 7.0.3 and
 *   its 6 small dependencies); without the registry the test skips, saying so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { installAll } from '../helpers/framework-versions.js';
import { api, assertNoLeakedServers, runsetCli, startRunset, tempDir, waitForSet } from '../helpers/server.js';
import { NPM_TOKEN, writeLocalToolSuite, writeUploadedToolSuite } from '../helpers/tool-suite.js';
import { chromiumMissing } from './playwright-fixtures.js';

const NO_CHROMIUM = chromiumMissing();

interface Member { name: string; status: string; error: string | null; output: string | null; heldBy: string | null }

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
  assert.ok(res.stdout.startsWith('{'), res.stderr);
  const set = JSON.parse(res.stdout) as { id: string; status: string };
  const members = (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${set.id}/test-runs`)).body.testRuns;
  assert.equal(set.status, 'SUCCESS', JSON.stringify(members));
  assert.deepEqual(members.map((m) => [m.name, m.status]), [['shop.spec.js › the built page is served', 'SUCCESS']]);
});

const UPLOAD_CONFIG = 'environments:\n  preview: { allowSuiteUploads: true }\ntests: []\n';

test('an uploaded suite: its build output re-included, its .npmrc setting honoured without its credential, its own cross-env on PATH, its preparation shown', { skip: NO_CHROMIUM, timeout: 180_000 }, async (t) => {
  // The worker's npm ci takes cross-env from the npm registry: without it there is nothing to try (cached once, a few kB).
  const reachable = await installAll([['cross-env', '7.0.3']]);
  if ('unreachable' in reachable) return t.skip(reachable.unreachable);
  const root = tempDir('runset-tools-upload-');
  const release = path.join(root, 'release');
  const suite = await writeUploadedToolSuite(path.join(root, 'suite'), release);
  const server = await startRunset({ config: UPLOAD_CONFIG, args: ['--workers', '2', '--suite-cache', path.join(root, 'cache'), '--poll', '300ms'] });
  t.after(async () => {
    writeFileSync(release, '');
    await server.stop();
    assertNoLeakedServers();
  });
  // Without its .runsetignore, the push names the build output its webServer's script serves, and the line that brings it back.
  renameSync(path.join(suite.dir, '.runsetignore'), path.join(root, 'runsetignore.aside'));
  const bare = await runsetCli(server, ['suites', 'push', suite.dir]);
  assert.equal(bare.code, 0, bare.stderr);
  assert.match(bare.stderr, /runset: note: dist\/ \(1 file, [\d.]+ kB\) is left out by \.gitignore line 2 \("dist\/"\) but server\.js \(run by the webServer command\) names it; to upload it, add the line "!\/dist\/" to \.runsetignore/);
  renameSync(path.join(root, 'runsetignore.aside'), path.join(suite.dir, '.runsetignore'));

  const push = await runsetCli(server, ['suites', 'push', suite.dir]);
  assert.equal(push.code, 0, push.stderr);
  assert.match(push.stderr, /\.npmrc: line 2 \(\/\/registry\.npmjs\.org\/:_authToken\) left out of the upload/);
  assert.ok(!push.stderr.includes(NPM_TOKEN) && !push.stdout.includes(NPM_TOKEN), 'the token is never printed');
  assert.doesNotMatch(push.stderr, /dist\/ is left out/, '.runsetignore brought dist/ back');
  const id = /[0-9a-f]{64}/.exec(push.stdout + push.stderr)?.[0];
  assert.ok(id, push.stderr);

  const created = await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env: 'preview', suite: id } });
  assert.equal(created.status, 200, created.text);
  const setId = created.body.testRunSetId;
  // While the worker installs the version's dependencies (held up by the suite's postinstall), nothing has begun.
  interface Details { phase: string; held: Array<{ workerId: string; members: number }> }
  const until = Date.now() + 60_000;
  let details = (await api<Details>(server, 'GET', `/v0/test-run-sets/${setId}/details`)).body;
  while (details.held.reduce((sum, h) => sum + h.members, 0) < 2 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
    details = (await api<Details>(server, 'GET', `/v0/test-run-sets/${setId}/details`)).body;
  }
  assert.equal(details.phase, 'preparing', JSON.stringify(details));
  assert.deepEqual(details.held.map((h) => h.members), [2], 'one worker holds both members');
  const set = (await api<{ status: string; startedAt: string | null }>(server, 'GET', `/v0/test-run-sets/${setId}`)).body;
  assert.deepEqual([set.status, set.startedAt], ['WAITING', null], 'the set has not started while its suite is prepared');
  const preparing = (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${setId}/test-runs`)).body.testRuns;
  assert.deepEqual(preparing.map((m) => m.status), ['WAITING', 'WAITING'], 'no member is RUNNING while its suite is prepared');
  const holder = details.held[0]?.workerId;
  assert.deepEqual(preparing.map((m) => m.heldBy), [holder, holder], 'each member names the worker holding it: not unclaimed, though WAITING');

  writeFileSync(release, '');
  const ended = await waitForSet(server, setId, 120_000);
  const members = (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${setId}/test-runs`)).body.testRuns;
  assert.equal(ended.status, 'SUCCESS', JSON.stringify(members));
  assert.deepEqual(members.map((m) => [m.name, m.status]).sort(), [['shop.spec.js › the built page is served', 'SUCCESS'], ['tool', 'SUCCESS']]);
  assert.deepEqual(members.map((m) => m.heldBy), [null, null], 'an ended member is held by nobody');
  assert.match(members.find((m) => m.name === 'tool')?.output ?? '', /from-cross-env/, 'a command finds the suite\'s own tool too');
  assert.equal((await api<Details>(server, 'GET', `/v0/test-run-sets/${setId}/details`)).body.phase, 'ended');
});
