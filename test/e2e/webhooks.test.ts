/**
 * Webhooks over real HTTP (SQLite, one serve process) against a local
 * receiver: a set's start and end are posted, signed, with the status, the
 * failed tests and the dashboard link (JSON and Slack); filters hold; a
 * receiver that is down gets the delivery when it comes back; a serve killed
 * mid-delivery delivers it after restart, once; every attempt is listed.
 */
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { freePort, Receiver } from '../helpers/receiver.js';
import { verifySignature } from '../../src/webhooks/signature.js';

interface Delivery {
  id: string;
  webhook: string;
  event: string;
  state: string;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  attempts: Array<{ n: number; statusCode: number | null; error: string | null; durationMs: number }>;
}

interface HookBody {
  event: string;
  deliveryId: string;
  env: string;
  testRunSet: { id: string };
  failedTests: Array<{ name: string; error: string | null }>;
  failedTestsNotListed: number;
  url: string;
}
interface SlackBody {
  text: string;
  blocks: unknown[];
}
const hookBody = (text: string) => JSON.parse(text) as HookBody;

const SECRET = `whsec_${randomBytes(12).toString('hex')}`;
const PUBLIC_URL = 'https://runset.example.com';

function config(team: string, extra = ''): string {
  return `
environments:
  staging:
  production:
tests:
  - name: passes
    type: command
    run: [node, -e, "0"]
  - name: fails
    type: command
    run: [node, -e, "process.exit(3)"]
    environments: [production]
webhooks:
  - name: team
    url: ${team}
    secret: \${env:HOOK_SECRET}
    events: [set.started, set.finished]
${extra}`;
}

async function create(server: RunningServer, env: string): Promise<string> {
  const res = await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env } });
  assert.equal(res.status, 200, res.text);
  return res.body.testRunSetId;
}

async function deliveries(server: RunningServer, setId: string): Promise<Delivery[]> {
  const res = await api<{ deliveries: Delivery[] }>(server, 'GET', `/v0/webhook-deliveries?setId=${setId}`);
  assert.equal(res.status, 200, res.text);
  return res.body.deliveries;
}

/** A receiver's check, written as the README tells users to (no runset code). */
function verifiedByHand(header: string, body: string): boolean {
  const fields = Object.fromEntries(header.split(',').map((kv) => kv.split('='))) as Record<string, string>;
  const expected = createHmac('sha256', SECRET).update(`${fields.t}.${body}`).digest('hex');
  return expected === fields.v1 && Math.abs(Date.now() / 1000 - Number(fields.t)) < 300;
}

describe('webhooks', () => {
  const servers: RunningServer[] = [];
  const receivers: Receiver[] = [];
  const start = async (...args: Parameters<typeof startRunset>) => {
    const server = await startRunset(...args);
    servers.push(server);
    return server;
  };
  const receiver = async (port?: number) => {
    const r = new Receiver();
    receivers.push(r);
    return port === undefined ? r.start() : Object.assign(r, { port });
  };
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop('SIGKILL');
    for (const r of receivers.splice(0)) await r.stop();
  });
  after(assertNoLeakedServers);

  test('a set is posted when it starts and ends: signed, with status, failed tests and link; filters hold; attempts listed', async () => {
    const team = await receiver();
    const prod = await receiver();
    const chat = await receiver();
    const extra = `
  - name: prod-only
    url: ${prod.url}
    secret: \${env:HOOK_SECRET}
    environments: [production]
  - name: chat
    url: \${env:CHAT_URL}
    format: slack
    environments: [production]
`;
    const server = await start({
      config: config('${env:TEAM_URL}', extra),
      args: ['--public-url', `${PUBLIC_URL}/`],
      env: { HOOK_SECRET: SECRET, TEAM_URL: team.url, CHAT_URL: chat.url },
    });
    const staging = await create(server, 'staging');
    const production = await create(server, 'production');
    await waitForSet(server, staging);
    const prodStatus = await waitForSet(server, production);
    assert.equal(prodStatus.status, 'FAIL');

    await team.until('both sets started and finished', () => team.delivered('set.finished').length === 2 && team.delivered('set.started').length === 2);
    await prod.until('the production set', () => prod.delivered().length === 1);
    await chat.until('the Slack message', () => chat.delivered().length === 1);

    const finished = team.delivered().find((r) => hookBody(r.body).testRunSet.id === production)!;
    const signature = String(finished.headers['runset-signature']);
    assert.match(signature, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.ok(verifySignature(signature, finished.body, SECRET), 'the signature verifies');
    assert.ok(verifiedByHand(signature, finished.body), 'and verifies with the README snippet');
    assert.ok(!verifySignature(signature, finished.body.replace('FAIL', 'SUCCESS'), SECRET), 'a changed body does not');
    assert.equal(finished.headers['content-type'], 'application/json');

    const body = hookBody(finished.body);
    const status = await api(server, 'GET', `/v0/test-run-sets/${production}`);
    assert.deepEqual(body.testRunSet, status.body, 'the seed status document');
    assert.equal(body.event, 'set.finished');
    assert.equal(body.env, 'production');
    assert.equal(body.deliveryId, finished.headers['runset-delivery']);
    assert.equal(body.url, `${PUBLIC_URL}/sets/${production}`);
    const members = await api<{ testRuns: Array<{ name: string; error: string | null }> }>(server, 'GET', `/v0/test-run-sets/${production}/test-runs`);
    const failing = members.body.testRuns.find((m) => m.name === 'fails')!;
    assert.deepEqual(body.failedTests, [{ name: 'fails', error: failing.error!.split('\n')[0] }]);
    assert.equal(body.failedTestsNotListed, 0);
    assert.ok(!finished.body.includes(SECRET));

    assert.ok(prod.delivered().every((r) => hookBody(r.body).env === 'production'), 'environments filter');
    assert.equal(prod.received.filter((r) => r.headers['runset-event'] === 'set.started').length, 0, 'events filter: set.finished only by default');
    const slack = JSON.parse(chat.delivered()[0]!.body) as SlackBody;
    assert.match(slack.text, /production: FAIL/);
    assert.match(JSON.stringify(slack.blocks), new RegExp(`${PUBLIC_URL}/sets/${production}\\|open the set`));
    assert.match(JSON.stringify(slack.blocks), /\*fails\*/);
    assert.equal(chat.delivered()[0]!.headers['runset-signature'], undefined, 'a Slack webhook without a secret is not signed');

    const listed = await deliveries(server, production);
    assert.deepEqual(listed.map((d) => `${d.webhook} ${d.event} ${d.state}`).sort(), [
      'chat set.finished delivered',
      'prod-only set.finished delivered',
      'team set.finished delivered',
      'team set.started delivered',
    ]);
    for (const d of listed) {
      assert.equal(d.attempts.length, 1);
      assert.equal(d.attempts[0]!.statusCode, 204);
      assert.equal(d.attempts[0]!.error, null);
      assert.ok(d.deliveredAt);
    }
    assert.ok(!JSON.stringify(listed).includes(chat.url), 'a URL read from the environment is never shown');
    const whole = await api<{ eventsWaiting: number }>(server, 'GET', `/v0/webhook-deliveries?setId=${production}`);
    assert.equal(whole.body.eventsWaiting, 0, 'every event of the ended set is fanned out');
    assert.equal((await deliveries(server, staging)).length, 2, 'staging: only team (started, finished)');

    // Bad input is a clear 400/404/401.
    const missing = await api(server, 'GET', '/v0/webhook-deliveries');
    assert.equal(missing.status, 400);
    assert.match(missing.text, /setId/);
    assert.equal((await api(server, 'GET', '/v0/webhook-deliveries?setId=nope')).status, 400);
    assert.equal((await api(server, 'GET', `/v0/webhook-deliveries?setId=${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`)).status, 404);
    assert.equal((await api(server, 'GET', `/v0/webhook-deliveries?setId=${production}`, { auth: null })).status, 401);
  });

  test('a receiver that is down gets the delivery when it comes back; each failed attempt is listed', async () => {
    const port = await freePort();
    const later = await receiver(port);
    const server = await start({ config: config(later.url), args: ['--webhook-retry', '200ms'], env: { HOOK_SECRET: SECRET } });
    const id = await create(server, 'staging');
    await waitForSet(server, id);

    let finished: Delivery | undefined;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      finished = (await deliveries(server, id)).find((d) => d.event === 'set.finished');
      if ((finished?.attempts.length ?? 0) >= 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(finished?.state, 'pending');
    assert.ok(finished.nextAttemptAt);
    for (const attempt of finished.attempts) {
      assert.equal(attempt.statusCode, null);
      assert.match(attempt.error!, /ECONNREFUSED/);
    }

    await later.start(port);
    await later.until('the delivery', () => later.delivered().length === 1);
    await new Promise((r) => setTimeout(r, 300));
    const done = (await deliveries(server, id)).find((d) => d.event === 'set.finished')!;
    assert.equal(done.state, 'delivered');
    assert.equal(done.attempts.at(-1)!.statusCode, 204);
    assert.ok(done.attempts.length >= 3);
    assert.equal(later.delivered().length, 1, 'delivered once');
  });

  test('a receiver address from the environment that is cloud metadata is refused at each attempt, and said', async () => {
    const server = await start({ config: config('${env:HOOK_URL}'), args: ['--webhook-retry', '1h'], env: { HOOK_SECRET: SECRET, HOOK_URL: 'http://2852039166/latest/meta-data/' } });
    const id = await create(server, 'staging');
    await waitForSet(server, id);
    let attempt: Delivery['attempts'][number] | undefined;
    for (const until = Date.now() + 15_000; !attempt && Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      attempt = (await deliveries(server, id)).find((d) => d.event === 'set.finished')?.attempts[0];
    }
    assert.equal(attempt?.statusCode, null);
    assert.match(attempt?.error ?? '', /^refused: 169\.254\.169\.254 is a cloud metadata address; runset never sends requests there/);
  });

  test('when: failure skips a passing set; when: change posts only a result unlike the environment\'s previous one', async () => {
    const team = await receiver();
    const failures = await receiver();
    const changes = await receiver();
    const extra = `
  - name: failures
    url: ${failures.url}
    secret: \${env:HOOK_SECRET}
    when: failure
  - name: changes
    url: ${changes.url}
    secret: \${env:HOOK_SECRET}
    when: change
`;
    const server = await start({ config: config(team.url, extra), env: { HOOK_SECRET: SECRET } });
    const ended: string[] = [];
    for (const env of ['staging', 'production', 'production']) {
      const id = await create(server, env);
      await waitForSet(server, id);
      ended.push(id);
    }
    const [passing, firstFail, secondFail] = ended as [string, string, string];
    await team.until('every end', () => team.delivered('set.finished').length === 3);
    await failures.until('both failing sets', () => failures.delivered().length === 2);
    await changes.until('the first result of each environment', () => changes.delivered().length === 2);
    assert.deepEqual(failures.delivered().map((r) => hookBody(r.body).testRunSet.id).sort(), [firstFail, secondFail].sort());
    assert.deepEqual(changes.delivered().map((r) => hookBody(r.body).testRunSet.id).sort(), [passing, firstFail].sort());
    assert.deepEqual((await deliveries(server, passing)).map((d) => d.webhook).sort(), ['changes', 'team', 'team'], 'no delivery is made for a hook that skips the set');
    assert.deepEqual((await deliveries(server, secondFail)).map((d) => d.webhook).sort(), ['failures', 'team', 'team'], 'FAIL after FAIL is no change');
  });

  test('serve killed mid-delivery delivers after restart, once', async () => {
    const slow = await receiver();
    slow.answer = 'hang';
    const dir = tempDir('runset-webhook-restart-');
    const configPath = path.join(dir, 'runset.config.yaml');
    writeFileSync(configPath, config(slow.url));
    const first = await start({ configPath, dataDir: path.join(dir, 'data'), env: { HOOK_SECRET: SECRET } });
    const id = await create(first, 'staging');
    await waitForSet(first, id);
    await slow.until('the first attempt', () => slow.received.some((r) => r.headers['runset-event'] === 'set.finished'));
    await first.stop('SIGKILL');

    slow.answer = 204;
    const second = await start({ configPath, dataDir: path.join(dir, 'data'), apiKey: first.apiKey, env: { HOOK_SECRET: SECRET } });
    await slow.until('the delivery after restart', () => slow.delivered().length === 1);
    await new Promise((r) => setTimeout(r, 1500));
    const posts = slow.received.filter((r) => r.headers['runset-event'] === 'set.finished');
    assert.equal(new Set(posts.map((r) => r.headers['runset-delivery'])).size, 1, 'the same delivery id both times: receivers deduplicate on it');
    assert.equal(slow.delivered().length, 1, 'answered once');
    const [delivery] = (await deliveries(second, id)).filter((d) => d.event === 'set.finished');
    assert.equal(delivery?.state, 'delivered');
    assert.equal(delivery?.attempts.length, 1, 'the attempt cut off by the kill was never recorded; the one after restart was');
  });
});
