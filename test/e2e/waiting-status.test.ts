/**
 * The waiting status over real HTTP (SQLite, one serve process): the seed GET
 * is unchanged but for its ETag; If-None-Match answers 304; Prefer: wait holds
 * the answer until a member moves, or 304 after N seconds; a closing server
 * answers its waiting clients; the SDK's wait follows a set with a handful of
 * requests and sees its end at once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RunsetClient } from '../../src/client/index.js';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';

const dir = tempDir('runset-wait-');
// Members end when the test writes their gate file (GATE + name): the test decides when the status moves.
const CONFIG = `
environments:
  gated: { variables: { GATE: ${path.join(dir, 'gate-')} } }
tests:
  - { name: first, type: command, run: [node, -e, "const f = process.env.GATE + 'first'; const t = setInterval(() => require('fs').existsSync(f) && clearInterval(t), 20)"] }
  - { name: second, type: command, run: [node, -e, "const f = process.env.GATE + 'second'; const t = setInterval(() => require('fs').existsSync(f) && clearInterval(t), 20)"] }
`;
const open = (name: string) => writeFileSync(path.join(dir, `gate-${name}`), '');

describe('a status that waits for news', () => {
  let server: RunningServer;
  before(async () => {
    server = await startRunset({ config: CONFIG, args: ['--workers', '2'] });
  });
  after(async () => {
    if (server.proc.exitCode === null) await server.stop();
    assertNoLeakedServers();
  });

  const status = (id: string, headers: Record<string, string> = {}) => api(server, 'GET', `/v0/test-run-sets/${id}`, { headers });

  async function endBoth(id: string) {
    open('first');
    open('second');
    return waitForSet(server, id);
  }

  async function runningSet(): Promise<{ id: string; etag: string }> {
    for (const name of ['first', 'second']) rmSync(path.join(dir, `gate-${name}`), { force: true });
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'gated' } });
    assert.equal(created.status, 200, created.text);
    const id = created.body.testRunSetId as string;
    for (;;) {
      const res = await status(id);
      if ((res.body as { progress: { counts: { RUNNING: number } } }).progress.counts.RUNNING === 2) return { id, etag: res.headers.get('etag')! };
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  test('the seed GET is the seed document, byte for byte, with an ETag beside it', async () => {
    const { id, etag } = await runningSet();
    const res = await status(id);
    const s = res.body;
    assert.equal(res.status, 200);
    assert.equal(res.text, JSON.stringify({ id, status: 'RUNNING', startedAt: s.startedAt, endedAt: null, createdAt: s.createdAt, progress: { counts: { WAITING: 0, RUNNING: 2, SUCCESS: 0, FAIL: 0 } } }));
    assert.match(etag, /^"[^"]+"$/);
    assert.equal(res.headers.get('etag'), etag);
    assert.equal(res.headers.get('preference-applied'), null);
    await endBoth(id);
  });

  test('If-None-Match with the current tag is 304 at once; any other tag gets the status', async () => {
    const { id, etag } = await runningSet();
    const same = await status(id, { 'if-none-match': etag });
    assert.equal(same.status, 304);
    assert.equal(same.text, '');
    assert.equal(same.headers.get('etag'), etag);
    const other = await status(id, { 'if-none-match': '"SUCCESS.0.0.2.0"' });
    assert.equal(other.status, 200);
    assert.equal(other.headers.get('etag'), etag);
    assert.equal(other.headers.get('preference-applied'), null, 'no wait was asked');
    // The status changed before a waiting read came: a wait that ended at once, and
    // it says so, or a client would take this server for one that never waits.
    const changed = await status(id, { 'if-none-match': '"WAITING.2.0.0.0"', prefer: 'wait=30' });
    assert.equal(changed.status, 200);
    assert.equal(changed.headers.get('preference-applied'), 'wait=30');
    assert.equal(changed.headers.get('etag'), etag);
    await endBoth(id);
  });

  test('Prefer: wait answers when a member ends, with the new status and tag', async () => {
    const { id, etag } = await runningSet();
    const waiting = status(id, { 'if-none-match': etag, prefer: 'wait=30' });
    await new Promise((r) => setTimeout(r, 300));
    open('first');
    const moved = await waiting;
    assert.equal(moved.status, 200, 'answered by the change, long before 30 s');
    assert.equal(moved.headers.get('preference-applied'), 'wait=30');
    assert.deepEqual((moved.body as { progress: unknown }).progress, { counts: { WAITING: 0, RUNNING: 1, SUCCESS: 1, FAIL: 0 } });
    assert.notEqual(moved.headers.get('etag'), etag);

    const ending = status(id, { 'if-none-match': moved.headers.get('etag')!, prefer: 'wait=30' });
    open('second');
    const ended = await ending;
    assert.equal((ended.body as { status: string }).status, 'SUCCESS');
    assert.notEqual((ended.body as { endedAt: unknown }).endedAt, null);
  });

  test('nothing changes: 304 after the wait, which is capped at 60 s', async () => {
    const { id, etag } = await runningSet();
    const asked = Date.now();
    const res = await status(id, { 'if-none-match': etag, prefer: 'wait=1' });
    assert.equal(res.status, 304);
    assert.ok(Date.now() - asked >= 900, 'it waited');
    assert.equal(res.headers.get('preference-applied'), 'wait=1');
    const ended = await endBoth(id);
    const capped = status(id, { 'if-none-match': `"${ended.status}.0.0.2.0"`, prefer: 'wait=3600' });
    // An unknown id and a malformed one answer as the seed GET does, waiting or not.
    assert.equal((await status('00000000-0000-4000-8000-000000000000', { 'if-none-match': '*', prefer: 'wait=5' })).status, 404);
    assert.equal((await status('nope', { 'if-none-match': '*', prefer: 'wait=5' })).status, 400);
    // Stopping the server answers the waiting client (304) instead of holding shutdown for a minute.
    await new Promise((r) => setTimeout(r, 200));
    const stopping = server.stop();
    const answer = await capped;
    assert.equal(answer.status, 304);
    assert.equal(answer.headers.get('preference-applied'), 'wait=60');
    assert.equal(await stopping, 0);
  });
});

describe('the SDK follows a set with waiting reads', () => {
  let server: RunningServer;
  before(async () => {
    server = await startRunset({ config: CONFIG, args: ['--workers', '2'] });
  });
  after(async () => {
    await server.stop();
    assertNoLeakedServers();
    rmSync(dir, { recursive: true, force: true });
  });

  test('it sees each change and the end at once, in a handful of requests, though the interval is 60 s', async () => {
    for (const name of ['first', 'second']) rmSync(path.join(dir, `gate-${name}`), { force: true });
    let requests = 0;
    const counting: typeof fetch = (input, init) => {
      requests++;
      return fetch(input, init);
    };
    const client = new RunsetClient({ url: server.url, apiKey: server.apiKey, fetch: counting });
    const { testRunSetId } = await client.createTestRunSet({ env: 'gated' });
    const seen: string[] = [];
    const following = client.waitForTestRunSet(testRunSetId, {
      interval: '60s',
      timeout: '45s',
      onProgress: (s) => seen.push(`${s.status} ${s.progress.counts.SUCCESS}`),
    });
    await new Promise((r) => setTimeout(r, 500));
    open('first');
    await new Promise((r) => setTimeout(r, 500));
    open('second');
    const final = await following;
    assert.equal(final.status, 'SUCCESS');
    assert.ok(seen.includes('RUNNING 1'), `the middle step was seen: ${seen.join(', ')}`);
    assert.ok(requests <= 8, `${requests} requests`);
  });
});
