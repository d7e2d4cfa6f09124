/**
 * The SDK's wait against servers that offer a waiting status (ETag +
 * Prefer: wait) and against servers that do not: it asks to be answered on a
 * change where it can, and falls back to polling at the interval where it cannot.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { RunsetClient } from '../../src/client/index.js';
import { assertNoLeakedFakeServers, SET_ID, startFakeServer, statusReply, type FakeServer, type Reply, type Routes } from './fake-server.js';

after(assertNoLeakedFakeServers);

async function withServer(routes: Routes, body: (client: RunsetClient, server: FakeServer) => Promise<void>): Promise<void> {
  const server = await startFakeServer(routes);
  try {
    await body(new RunsetClient({ url: server.url, apiKey: 'rs_long_poll_test_key_0123456789' }), server);
  } finally {
    await server.close();
  }
}

const tagged = (reply: Reply, etag: string, extra: Record<string, string> = {}): Reply => ({ ...reply, headers: { etag, ...extra } });
const statusRequests = (server: FakeServer) => server.requests.filter((r) => r.method === 'GET');

test('a server that waits is asked to answer on change, and asked again at once: no interval between', async () => {
  const answers = [
    tagged(statusReply('RUNNING', { RUNNING: 2 }), '"a"'),
    { ...tagged(statusReply('RUNNING', { RUNNING: 1, SUCCESS: 1 }), '"b"', { 'preference-applied': 'wait=5' }), delayMs: 50 },
    { ...tagged(statusReply('FAIL', { SUCCESS: 1, FAIL: 1 }), '"c"', { 'preference-applied': 'wait=5' }), delayMs: 50 },
  ];
  await withServer({ status: (_r, n) => answers[Math.min(n, 2)]! }, async (client, server) => {
    const seen: string[] = [];
    // An interval longer than the timeout: had it slept once between reads, the wait would time out.
    const final = await client.waitForTestRunSet(SET_ID, { interval: '60s', timeout: '20s', onProgress: (s) => seen.push(`${s.status} ${s.progress.counts.SUCCESS}`) });
    assert.equal(final.status, 'FAIL');
    assert.deepEqual(seen, ['RUNNING 0', 'RUNNING 1', 'FAIL 1']);
    const [first, second, third] = statusRequests(server);
    assert.equal(first?.headers['if-none-match'], undefined, 'the first read is the plain seed operation');
    assert.equal(first?.headers.prefer, undefined);
    assert.equal(second?.headers['if-none-match'], '"a"');
    assert.match(String(second?.headers.prefer), /^wait=(1[0-9]|[1-9])$/, 'at most what is left of the timeout');
    assert.equal(third?.headers['if-none-match'], '"b"');
  });
});

test('"not modified" after a full wait keeps the last status and asks again at once', async () => {
  const answers = [
    tagged(statusReply('RUNNING', { RUNNING: 1 }), '"a"'),
    { status: 304, headers: { etag: '"a"', 'preference-applied': 'wait=1' }, raw: '', delayMs: 1000 },
    tagged(statusReply('SUCCESS', { SUCCESS: 1 }), '"b"', { 'preference-applied': 'wait=1' }),
  ];
  await withServer({ status: (_r, n) => answers[Math.min(n, 2)]! }, async (client, server) => {
    const seen: string[] = [];
    // The timeout leaves a 1 s wait (floor of what is left); interval far longer than the timeout.
    const final = await client.waitForTestRunSet(SET_ID, { interval: '60s', timeout: '1900ms', onProgress: (s) => seen.push(s.status) });
    assert.equal(final.status, 'SUCCESS');
    assert.deepEqual(seen, ['RUNNING', 'RUNNING', 'SUCCESS'], 'a 304 reports the status it confirms');
    assert.equal(statusRequests(server)[1]?.headers.prefer, 'wait=1');
  });
});

test('a status that changed before a conditional read is news: asked again at once, even when the server does not say it waited', async () => {
  // The server held the second read for a change; the third finds the status
  // already changed and answers at once without Preference-Applied (what a
  // runset server before 0.1 answered): the client must not sleep its interval.
  const answers = [
    tagged(statusReply('RUNNING', { RUNNING: 3 }), '"a"'),
    { ...tagged(statusReply('RUNNING', { RUNNING: 2, SUCCESS: 1 }), '"b"', { 'preference-applied': 'wait=5' }), delayMs: 50 },
    tagged(statusReply('RUNNING', { RUNNING: 1, SUCCESS: 2 }), '"c"'),
    tagged(statusReply('SUCCESS', { SUCCESS: 3 }), '"d"'),
  ];
  await withServer({ status: (_r, n) => answers[Math.min(n, 3)]! }, async (client, server) => {
    const final = await client.waitForTestRunSet(SET_ID, { interval: '60s', timeout: '20s' });
    assert.equal(final.status, 'SUCCESS');
    const reads = statusRequests(server);
    assert.equal(reads.length, 4);
    assert.equal(reads[3]?.headers['if-none-match'], '"c"');
    assert.ok(reads[3].at - reads[2]!.at < 5_000, 'the read after a change went at once, not after the 60 s interval');
  });
});

test('a server without ETags is polled at the interval with plain reads', async () => {
  const answers = [statusReply('RUNNING', { RUNNING: 1 }), statusReply('RUNNING', { RUNNING: 1 }), statusReply('SUCCESS', { SUCCESS: 1 })];
  await withServer({ status: (_r, n) => answers[Math.min(n, 2)]! }, async (client, server) => {
    const final = await client.waitForTestRunSet(SET_ID, { interval: '30ms', timeout: '5s' });
    assert.equal(final.status, 'SUCCESS');
    const reads = statusRequests(server);
    assert.equal(reads.length, 3);
    for (const r of reads) {
      assert.equal(r.headers['if-none-match'], undefined);
      assert.equal(r.headers.prefer, undefined);
    }
    for (let i = 1; i < reads.length; i++) assert.ok(reads[i]!.at - reads[i - 1]!.at >= 25, 'the interval is slept between plain reads');
  });
});

test('a server with ETags that does not wait answers 304 at once: the interval is slept, no tight loop', async () => {
  const answers: Reply[] = [
    tagged(statusReply('RUNNING', { RUNNING: 1 }), '"a"'),
    { status: 304, headers: { etag: '"a"' }, raw: '' },
    { status: 304, headers: { etag: '"a"' }, raw: '' },
    tagged(statusReply('FAIL', { FAIL: 1 }), '"b"'),
  ];
  await withServer({ status: (_r, n) => answers[Math.min(n, 3)]! }, async (client, server) => {
    const final = await client.waitForTestRunSet(SET_ID, { interval: '40ms', timeout: '5s' });
    assert.equal(final.status, 'FAIL');
    const reads = statusRequests(server);
    assert.equal(reads.length, 4);
    assert.equal(reads[1]?.headers['if-none-match'], '"a"', 'a conditional read still saves the body');
    // The first conditional read goes at once (it finds out whether the server waits); after it, the interval.
    for (let i = 2; i < reads.length; i++) assert.ok(reads[i]!.at - reads[i - 1]!.at >= 35, `read ${i} came after the interval`);
  });
});

test('longPoll: false sends only plain reads, even to a server that waits', async () => {
  const answers = [tagged(statusReply('RUNNING', { RUNNING: 1 }), '"a"'), tagged(statusReply('SUCCESS', { SUCCESS: 1 }), '"b"')];
  await withServer({ status: (_r, n) => answers[Math.min(n, 1)]! }, async (client, server) => {
    await client.waitForTestRunSet(SET_ID, { interval: '20ms', timeout: '5s', longPoll: false });
    assert.ok(statusRequests(server).every((r) => r.headers['if-none-match'] === undefined && r.headers.prefer === undefined));
  });
});

test('getTestRunSetIfChanged: null status on 304, the tag and whether the server waited', async () => {
  const answers: Reply[] = [
    tagged(statusReply('RUNNING', { RUNNING: 1 }), '"a"'),
    { status: 304, headers: { etag: '"a"', 'preference-applied': 'wait=2' }, raw: '' },
  ];
  await withServer({ status: (_r, n) => answers[Math.min(n, 1)]! }, async (client, server) => {
    const first = await client.getTestRunSetIfChanged(SET_ID);
    assert.equal(first.status?.status, 'RUNNING');
    assert.deepEqual([first.etag, first.waited], ['"a"', false]);
    const second = await client.getTestRunSetIfChanged(SET_ID, { etag: first.etag, waitSeconds: 2 });
    assert.deepEqual(second, { status: null, etag: '"a"', waited: true });
    assert.equal(statusRequests(server)[1]?.headers.prefer, 'wait=2');
  });
});
