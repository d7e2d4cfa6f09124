/**
 * GitHub check runs through a real `serve` (SQLite) against a local GitHub
 * that validates every call against GitHub's published REST description
 * (test/helpers/github-contract.ts): a set with a commit label gets one check
 * run, in_progress while it runs, completed with its conclusion, counts, the
 * dashboard link and one annotation per failed Playwright case (at most 50);
 * rate limits and 5xx answers are retried, a 401 or 422 is given up with
 * GitHub's message; a GitHub App signs in with a JWT; no token is ever in the
 * logs, the deliveries or the database.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { GitHubContractServer } from '../helpers/github-contract.js';
import { chromiumMissing, writeShopSuite } from './playwright-fixtures.js';

const TOKEN = `ghs_${randomBytes(16).toString('hex')}`;
const COMMIT = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';
const PUBLIC_URL = 'https://runset.example.com';

/** One pass, two failures on lines of their own (the 50-annotation cut is proven in test/unit/code-host-report.test.ts). */
const SPEC = `import { test, expect } from '@playwright/test';
test('cart keeps items', async () => { expect(1 + 1).toBe(2); });
test('checkout pays', async () => { expect('declined', 'the card is charged').toBe('paid'); });
test('receipt is sent', async () => { throw new Error('no receipt\\nsecond line'); });
`;
const lineOf = (title: string) => SPEC.split('\n').findIndex((l) => l.includes(`'${title}'`)) + 1;

interface Delivery {
  webhook: string;
  event: string;
  state: string;
  attempts: Array<{ n: number; statusCode: number | null; error: string | null }>;
}

async function deliveries(server: RunningServer, setId: string): Promise<Delivery[]> {
  const res = await api<{ deliveries: Delivery[] }>(server, 'GET', `/v0/webhook-deliveries?setId=${setId}`);
  assert.equal(res.status, 200, res.text);
  return res.body.deliveries;
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Deliveries once none is pending. */
const settled = (server: RunningServer, setId: string, count: number) =>
  until(`${count} settled deliveries`, async () => {
    const all = await deliveries(server, setId);
    return all.length === count && all.every((d) => d.state !== 'pending') ? all : undefined;
  });

async function create(server: RunningServer, labels: Record<string, string>, env = 'production'): Promise<string> {
  const res = await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env, labels } });
  assert.equal(res.status, 200, res.text);
  return res.body.testRunSetId;
}

function assertNoToken(server: RunningServer, secrets: string[], found: unknown): void {
  const files = readdirSync(server.dataDir).map((f) => path.join(server.dataDir, f)).filter((f) => statSync(f).isFile());
  for (const secret of secrets) {
    assert.ok(!server.logs().includes(secret), 'a token is in the logs');
    assert.ok(!JSON.stringify(found).includes(secret), 'a token is in the deliveries');
    for (const file of files) assert.ok(!readFileSync(file).includes(secret), `a token is in ${file}`);
  }
}

describe('GitHub check runs', { skip: chromiumMissing() }, () => {
  const github = new GitHubContractServer();
  let server: RunningServer | undefined;
  let release = '';
  before(async () => {
    await github.start();
    github.token = TOKEN;
    const dir = tempDir('runset-checks-');
    writeShopSuite(dir, SPEC);
    release = path.join(dir, 'release');
    const configPath = path.join(dir, 'runset.config.yaml');
    writeFileSync(
      configPath,
      `
environments:
  staging: {}
  production: {}
  preview: {}
tests:
  - { name: ui, type: playwright, dir: suite, environments: [staging] }
  - name: gate
    type: command
    run: [node, -e, "const t = setInterval(() => { if (require('fs').existsSync(process.argv[1])) clearInterval(t); }, 50)", ${JSON.stringify(release)}]
    environments: [staging]
  - { name: quick, type: command, run: [node, -e, "0"] }
  - { name: fails, type: command, run: [node, -e, "process.exit(3)"], environments: [production] }
github:
  repository: acme/shop
  token: \${env:GH_TOKEN}
  environments: [staging, production]
  apiUrl: ${github.url}/
  pathPrefix: suite/tests
`,
    );
    server = await startRunset({ configPath, env: { GH_TOKEN: TOKEN }, args: ['--public-url', PUBLIC_URL, '--webhook-retry', '200ms'] });
  });
  after(async () => {
    await server?.stop();
    await github.stop();
    assertNoLeakedServers();
  });

  test('a set with a commit gets one check run: in_progress while it runs, then its result with annotations', async () => {
    const setId = await create(server!, { commit: COMMIT, branch: 'main' }, 'staging');
    const running = await until('an in_progress check run', () => github.checkRuns.find((r) => r.external_id === setId));
    assert.equal(running.status, 'in_progress');
    assert.equal(running.name, 'runset (staging)');
    assert.equal(running.head_sha, COMMIT);
    assert.equal(running.details_url, `${PUBLIC_URL}/sets/${setId}`);
    writeFileSync(release, '');
    const ended = await waitForSet(server!, setId, 180_000);
    assert.equal(ended.status, 'FAIL');
    const found = await settled(server!, setId, 2);
    assert.deepEqual(found.map((d) => [d.webhook, d.event, d.state]), [['github:check-run', 'set.started', 'delivered'], ['github:check-run', 'set.finished', 'delivered']]);

    assert.deepEqual(github.violations, []);
    const runs = github.checkRuns.filter((r) => r.external_id === setId);
    assert.equal(runs.length, 1, 'one check run per set');
    const [run] = runs;
    assert.equal(run!.status, 'completed');
    assert.equal(run!.conclusion, 'failure');
    assert.match(run!.output.title!, /^2 failed, 3 passed of 5 tests$/);
    assert.match(run!.output.summary!, /\| 3 \| 2 \| 0 \| 0 \|/);
    assert.ok(run!.output.summary!.includes(`(${PUBLIC_URL}/sets/${setId})`), 'the summary links the dashboard');
    const annotations = run!.output.annotations;
    assert.equal(annotations.length, 2, 'one annotation per failed Playwright case');
    assert.deepEqual(
      { ...annotations[0], message: (annotations[0]!.message as string).split(' ')[0] },
      { path: 'suite/tests/shop.spec.ts', start_line: lineOf('checkout pays'), end_line: lineOf('checkout pays'), annotation_level: 'failure', title: 'shop.spec.ts › checkout pays', message: 'Error:' },
    );
    assert.match(annotations[0]!.message as string, /the card is charged/);
    assert.equal(annotations[1]!.start_line, lineOf('receipt is sent'));
    assert.match(annotations[1]!.message as string, /^Error: no receipt/);
    const calls = github.requests.filter((r) => r.path.includes(`/check-runs`) && r.method !== 'GET');
    assert.deepEqual(calls.map((c) => [c.method, (c.body as { status: string }).status]), [['POST', 'in_progress'], ['PATCH', 'completed']]);
    assert.ok(github.requests.every((r) => r.headers.authorization === `Bearer ${TOKEN}` && r.headers['x-github-api-version'] === '2022-11-28'));
    assertNoToken(server!, [TOKEN], found);
  });

  test('sets without a commit label, or of an environment not listed, are not reported', async () => {
    const before = github.requests.length;
    const plain = await create(server!, { branch: 'main' });
    const other = await create(server!, { commit: COMMIT }, 'preview');
    await waitForSet(server!, plain, 60_000);
    await waitForSet(server!, other, 60_000);
    await new Promise((r) => setTimeout(r, 1_500));
    assert.deepEqual(await deliveries(server!, plain), []);
    assert.deepEqual(await deliveries(server!, other), []);
    assert.equal(github.requests.length, before);
  });

  test('a rate limit (403) and a 500 are retried; a 422 is given up with GitHub\'s message', async () => {
    github.script.push('rate-limit', 500);
    const retried = await create(server!, { commit: COMMIT });
    await waitForSet(server!, retried, 60_000);
    const found = await settled(server!, retried, 2);
    assert.ok(found.every((d) => d.state === 'delivered'), JSON.stringify(found));
    const failures = found.flatMap((d) => d.attempts).filter((a) => a.error !== null);
    assert.deepEqual(failures.map((a) => a.statusCode).sort(), [403, 500]);
    assert.ok(failures.some((a) => /HTTP 403: API rate limit exceeded for installation\. \(rate limited\)$/.test(a.error!)), JSON.stringify(failures));
    assert.ok(failures.some((a) => /HTTP 500: Server Error$/.test(a.error!)), JSON.stringify(failures));
    const runs = github.checkRuns.filter((r) => r.external_id === retried);
    assert.deepEqual(runs.map((r) => [r.status, r.conclusion]), [['completed', 'failure']]);

    github.script.push(422);
    const refused = await create(server!, { commit: COMMIT });
    await waitForSet(server!, refused, 60_000);
    const given = await settled(server!, refused, 2);
    const failed = given.find((d) => d.state === 'failed');
    assert.ok(failed, JSON.stringify(given));
    assert.equal(failed.attempts.length, 1, 'a 422 is not retried');
    assert.match(failed.attempts[0]!.error!, /HTTP 422: Validation Failed/);
    assert.deepEqual(github.violations, []);
  });

  test('a wrong token is given up after one attempt with "Bad credentials", and never shown', async () => {
    github.token = 'ghs_another';
    try {
      const setId = await create(server!, { commit: COMMIT });
      await waitForSet(server!, setId, 60_000);
      const found = await settled(server!, setId, 2);
      for (const d of found) {
        assert.equal(d.state, 'failed');
        assert.deepEqual(d.attempts.map((a) => [a.statusCode, a.error]), [[401, "listing the commit's check runs: HTTP 401: Bad credentials"]]);
      }
      assertNoToken(server!, [TOKEN], found);
    } finally {
      github.token = TOKEN;
    }
  });

  test('the local GitHub refuses what GitHub refuses: 51 annotations, an unknown field, an unknown path', async () => {
    const post = (p: string, body: unknown) =>
      fetch(`${github.url}${p}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const annotation = { path: 'a.ts', start_line: 1, end_line: 1, annotation_level: 'failure', message: 'x' };
    const tooMany = await post('/repos/acme/shop/check-runs', { name: 'x', head_sha: COMMIT, output: { title: 't', summary: 's', annotations: Array(51).fill(annotation) } });
    assert.equal(tooMany.status, 422);
    const badLevel = await post('/repos/acme/shop/check-runs', { name: 'x', head_sha: COMMIT, status: 'done' });
    assert.equal(badLevel.status, 422);
    assert.match(((await badLevel.json()) as { message: string }).message, /status must be equal to one of the allowed values/);
    assert.equal((await post('/repos/acme/shop/check-run', {})).status, 404);
    github.violations.length = 0;
  });
});

describe('GitHub check runs as a GitHub App', { skip: chromiumMissing() }, () => {
  const github = new GitHubContractServer();
  let server: RunningServer | undefined;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  before(async () => {
    await github.start();
    github.app = { id: '4242', publicKey, installationId: 77, installationToken: `ghs_${randomBytes(16).toString('hex')}` };
    server = await startRunset({
      config: `
environments:
  production: {}
tests:
  - { name: fails, type: command, run: [node, -e, "process.exit(3)"] }
github:
  repository: acme/shop
  app:
    id: 4242
    privateKey: \${env:GH_APP_KEY}
  apiUrl: ${github.url}
`,
      env: { GH_APP_KEY: pem },
      args: ['--public-url', PUBLIC_URL],
    });
  });
  after(async () => {
    await server?.stop();
    await github.stop();
    assertNoLeakedServers();
  });

  test('signs a JWT, takes an installation token, and reports with it', async () => {
    const setId = await create(server!, { commit: COMMIT });
    await waitForSet(server!, setId, 60_000);
    const found = await settled(server!, setId, 2);
    assert.ok(found.every((d) => d.state === 'delivered'), JSON.stringify(found));
    const run = github.checkRuns.find((r) => r.external_id === setId);
    assert.equal(run?.conclusion, 'failure');
    assert.deepEqual(github.violations, []);
    assert.equal(github.requests.filter((r) => r.path.endsWith('/access_tokens')).length, 1, 'the installation token is kept, not asked for each call');
    assert.ok(existsSync(server!.dataDir));
    assertNoToken(server!, [github.app!.installationToken, pem.split('\n')[1]!], found);
  });
});
