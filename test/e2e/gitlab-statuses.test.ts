/**
 * GitLab commit statuses through a real `serve` (SQLite) against a local
 * GitLab that checks the documented fields of POST /projects/:id/statuses/:sha
 * (test/helpers/gitlab-contract.ts): `running` while the set runs, then
 * `failed` or `success`, named, linked to the set's page; a wrong token is
 * given up with GitLab's message and never shown.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { GitLabContractServer } from '../helpers/gitlab-contract.js';

const TOKEN = `glpat-${randomBytes(12).toString('hex')}`;
const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const PUBLIC_URL = 'https://runset.example.com';

interface Delivery {
  webhook: string;
  event: string;
  state: string;
  attempts: Array<{ statusCode: number | null; error: string | null }>;
}

async function settled(server: RunningServer, setId: string): Promise<Delivery[]> {
  const end = Date.now() + 60_000;
  for (;;) {
    const res = await api<{ deliveries: Delivery[] }>(server, 'GET', `/v0/webhook-deliveries?setId=${setId}`);
    const all = res.body.deliveries;
    if (all.length === 2 && all.every((d) => d.state !== 'pending')) return all;
    if (Date.now() > end) throw new Error(`deliveries not settled: ${res.text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('GitLab commit statuses', () => {
  const gitlab = new GitLabContractServer();
  let server: RunningServer | undefined;
  let release = '';
  before(async () => {
    await gitlab.start();
    gitlab.token = TOKEN;
    const dir = tempDir('runset-gitlab-');
    release = path.join(dir, 'release');
    server = await startRunset({
      config: `
environments:
  staging: {}
tests:
  - name: gate
    type: command
    run: [node, -e, "const t = setInterval(() => { if (require('fs').existsSync(process.argv[1])) clearInterval(t); }, 50)", ${JSON.stringify(release)}]
  - { name: fails, type: command, run: [node, -e, "process.exit(3)"] }
gitlab:
  project: group/shop
  token: \${env:GL_TOKEN}
  apiUrl: ${gitlab.url}
`,
      env: { GL_TOKEN: TOKEN },
      args: ['--public-url', PUBLIC_URL],
    });
  });
  after(async () => {
    await server?.stop();
    await gitlab.stop();
    assertNoLeakedServers();
  });

  test('running while the set runs, then failed, named and linked; the token never shown', async () => {
    const res = await api<{ testRunSetId: string }>(server!, 'POST', '/v0/test-run-sets', { body: { env: 'staging', labels: { commit: COMMIT } } });
    const setId = res.body.testRunSetId;
    const end = Date.now() + 60_000;
    while (!gitlab.posted.some((p) => p.state === 'running')) {
      assert.ok(Date.now() < end, 'no running status');
      await new Promise((r) => setTimeout(r, 100));
    }
    writeFileSync(release, '');
    await waitForSet(server!, setId, 60_000);
    const found = await settled(server!, setId);
    assert.deepEqual(found.map((d) => [d.webhook, d.state]), [['gitlab:commit-status', 'delivered'], ['gitlab:commit-status', 'delivered']]);
    assert.deepEqual(gitlab.violations, []);
    const accepted = gitlab.posted.filter((p) => p.status === 201);
    assert.deepEqual(accepted.map((p) => p.state), ['running', 'failed']);
    const last = accepted.at(-1)!;
    assert.deepEqual(
      { project: last.project, sha: last.sha, name: last.name, target_url: last.target_url, description: last.description },
      { project: 'group/shop', sha: COMMIT, name: 'runset (staging)', target_url: `${PUBLIC_URL}/sets/${setId}`, description: '1 failed, 1 passed of 2 tests' },
    );
    assert.ok(!server!.logs().includes(TOKEN) && !JSON.stringify(found).includes(TOKEN));
    for (const file of readdirSync(server!.dataDir).map((f) => path.join(server!.dataDir, f)).filter((f) => statSync(f).isFile())) assert.ok(!readFileSync(file).includes(TOKEN), file);
  });

  test('a wrong token: given up after one attempt with GitLab\'s message', async () => {
    gitlab.token = 'glpat-other';
    const res = await api<{ testRunSetId: string }>(server!, 'POST', '/v0/test-run-sets', { body: { env: 'staging', labels: { commit: COMMIT } } });
    await waitForSet(server!, res.body.testRunSetId, 60_000);
    const found = await settled(server!, res.body.testRunSetId);
    for (const d of found) assert.deepEqual([d.state, d.attempts.map((a) => [a.statusCode, a.error])], ['failed', [[401, 'posting the commit status: HTTP 401: 401 Unauthorized']]]);
    assert.deepEqual(gitlab.violations, []);
  });
});
