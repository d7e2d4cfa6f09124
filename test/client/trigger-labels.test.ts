/**
 * `runset trigger` sends the CI's context as labels (the variables of the CI it
 * runs in, `--label` on top, `--no-ci-labels` to leave them out), and still
 * creates the set against a server from before labels.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { runTriggerCommand } from '../../src/cli/trigger.js';
import { assertNoLeakedFakeServers, collector, created, problem, sequence, SET_ID, startFakeServer, type FakeServer, type Routes } from './fake-server.js';

after(assertNoLeakedFakeServers);

const KEY = 'rs_test_0123456789abcdefSECRETKEY';
const GITHUB = {
  GITHUB_ACTIONS: 'true',
  GITHUB_SHA: 'a1b2c3d',
  GITHUB_REF: 'refs/heads/main',
  GITHUB_REF_NAME: 'main',
  GITHUB_SERVER_URL: 'https://github.com',
  GITHUB_REPOSITORY: 'acme/shop',
  GITHUB_RUN_ID: '42',
  GITHUB_ACTOR: 'octocat',
};

async function trigger(routes: Routes, argv: string[], env: Record<string, string> = {}) {
  const server: FakeServer = await startFakeServer(routes);
  try {
    const io = collector();
    const code = await runTriggerCommand(argv, { RUNSET_URL: server.url, RUNSET_API_KEY: KEY, ...env }, io);
    return { code, out: io.out(), err: io.err(), bodies: server.requests.map((r) => JSON.parse(r.body || '{}') as Record<string, unknown>) };
  } finally {
    await server.close();
  }
}

test("the CI's variables become labels, and --label adds to them and wins", async () => {
  const r = await trigger({}, ['--env', 'staging', '--label', 'release=2026.11', '--label', 'branch=release/2026.11'], GITHUB);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(r.bodies[0], {
    env: 'staging',
    labels: {
      ci: 'github',
      commit: 'a1b2c3d',
      commit_url: 'https://github.com/acme/shop/commit/a1b2c3d',
      branch: 'release/2026.11',
      pipeline: 'https://github.com/acme/shop/actions/runs/42',
      actor: 'octocat',
      repo: 'acme/shop',
      release: '2026.11',
    },
  });
});

test('--no-ci-labels and no CI: the body is the seed\'s, without labels', async () => {
  assert.deepEqual((await trigger({}, ['--env', 'staging', '--no-ci-labels'], GITHUB)).bodies[0], { env: 'staging' });
  assert.deepEqual((await trigger({}, ['--env', 'staging'])).bodies[0], { env: 'staging' });
});

test('a server from before labels: the set is created without the CI context, and that is said', async () => {
  const older = problem(400, 'unknown_field', 'body: unknown field "labels"; accepted: a JSON object {"env": string, "envOverride"?: {string: string}}');
  const r = await trigger({ create: sequence(older, created()) }, ['--env', 'staging'], GITHUB);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, `${SET_ID}\n`);
  assert.deepEqual(r.bodies.map((b) => 'labels' in b), [true, false]);
  assert.match(r.err, /does not take labels/);

  // Labels asked for by name are not dropped silently: the refusal stands.
  const asked = await trigger({ create: sequence(older, created()) }, ['--env', 'staging', '--label', 'release=1']);
  assert.equal(asked.code, 3);
  assert.match(asked.err, /unknown field "labels"/);
});

test('a bad --label is a usage error (exit 3) that says what is accepted', async () => {
  const r = await trigger({}, ['--env', 'staging', '--label', 'Release=1']);
  assert.equal(r.code, 3);
  assert.match(r.err, /--label key "Release" must be 1-64 of a-z/);
  assert.equal(r.bodies.length, 0, 'nothing was sent');
});
