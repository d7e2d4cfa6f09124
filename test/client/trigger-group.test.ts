/**
 * `runset trigger` and concurrency groups: in GitHub Actions a set gets the
 * repository, workflow and ref as its group by default (a new push supersedes
 * the set of the previous one), `--group` names another, `--no-ci-group` sends
 * none, and a server from before groups still gets its set (without the
 * default group, said so; a group asked for by name is not dropped).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { runTriggerCommand } from '../../src/cli/trigger.js';
import { ciConcurrencyGroup } from '../../src/client/ci-labels.js';
import { assertNoLeakedFakeServers, collector, created, problem, sequence, startFakeServer, type Routes } from './fake-server.js';

after(assertNoLeakedFakeServers);

const GITHUB = { GITHUB_ACTIONS: 'true', GITHUB_REPOSITORY: 'acme/shop', GITHUB_WORKFLOW: 'e2e', GITHUB_REF: 'refs/pull/42/merge' };

async function groupSent(routes: Routes, argv: string[], env: Record<string, string>) {
  const server = await startFakeServer(routes);
  try {
    const io = collector();
    const code = await runTriggerCommand(['--env', 'staging', '--no-ci-labels', ...argv], { RUNSET_URL: server.url, RUNSET_API_KEY: 'rs_test_key', ...env }, io);
    const groups = server.requests.map((r) => (JSON.parse(r.body || '{}') as { concurrencyGroup?: string }).concurrencyGroup);
    return { code, err: io.err(), groups };
  } finally {
    await server.close();
  }
}

test('the default group in GitHub Actions is repository/workflow@ref; none elsewhere or without all three', () => {
  assert.equal(ciConcurrencyGroup(GITHUB), 'acme/shop/e2e@refs/pull/42/merge');
  assert.equal(ciConcurrencyGroup({ ...GITHUB, GITHUB_ACTIONS: undefined }), undefined);
  assert.equal(ciConcurrencyGroup({ ...GITHUB, GITHUB_WORKFLOW: '' }), undefined);
  assert.equal(ciConcurrencyGroup({ ...GITHUB, GITHUB_WORKFLOW: 'w'.repeat(300) })?.length, 256, 'cut to what the server takes');
});

test('trigger sends the default group, --group instead of it, and nothing with --no-ci-group or outside a CI', async () => {
  assert.deepEqual((await groupSent({}, [], GITHUB)).groups, ['acme/shop/e2e@refs/pull/42/merge']);
  assert.deepEqual((await groupSent({}, ['--group', 'nightly'], GITHUB)).groups, ['nightly']);
  assert.deepEqual((await groupSent({}, ['--group', 'nightly'], {})).groups, ['nightly']);
  assert.deepEqual((await groupSent({}, ['--no-ci-group'], GITHUB)).groups, [undefined]);
  assert.deepEqual((await groupSent({}, [], {})).groups, [undefined]);
  const long = await groupSent({}, ['--group', 'g'.repeat(257)], {});
  assert.equal(long.code, 3);
  assert.match(long.err, /a group of 1-256 characters/);
});

test('a server from before groups: created without the default group, said so; a named group is not dropped', async () => {
  const older = problem(400, 'unknown_field', 'body: unknown field "concurrencyGroup"; accepted: …');
  const byDefault = await groupSent({ create: sequence(older, created()) }, [], GITHUB);
  assert.equal(byDefault.code, 0, byDefault.err);
  assert.deepEqual(byDefault.groups, ['acme/shop/e2e@refs/pull/42/merge', undefined]);
  assert.match(byDefault.err, /does not take concurrency groups/);

  const named = await groupSent({ create: sequence(older, created()) }, ['--group', 'nightly'], GITHUB);
  assert.equal(named.code, 3);
  assert.match(named.err, /unknown field "concurrencyGroup"/);
});
