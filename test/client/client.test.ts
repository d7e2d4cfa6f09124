/**
 * The SDK on its own: one request per method, errors as plain data that say
 * whether to retry, the wait loop, and the key kept out of sight.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { isTransient, parseRetryAfter, RunsetApiError, RunsetClient } from '../../src/client/index.js';
import { backoffDelay } from '../../src/client/retry.js';
import { assertNoLeakedFakeServers, membersReply, problem, sequence, SET_ID, startFakeServer, statusReply, type Routes } from './fake-server.js';

after(assertNoLeakedFakeServers);

const KEY = 'rs_sdk_test_key_abcdef0123456789';

async function withClient<T>(routes: Routes, body: (client: RunsetClient, requests: () => number) => Promise<T>, options: { requestTimeout?: string } = {}): Promise<T> {
  const server = await startFakeServer(routes);
  try {
    return await body(new RunsetClient({ url: `${server.url}/`, apiKey: KEY, userAgent: 'sdk-test', ...options }), () => server.requests.length);
  } finally {
    await server.close();
  }
}

test('create, get and list read the seed shapes and tolerate extension fields', async () => {
  const routes: Routes = { members: () => membersReply([{ name: 'a', status: 'SUCCESS', flaky: false }]) };
  await withClient(routes, async (client) => {
    assert.deepEqual(await client.createTestRunSet({ env: 'staging' }, { idempotencyKey: 'k-1' }), { testRunSetId: SET_ID });
    const status = await client.getTestRunSet(SET_ID);
    assert.equal(status.status, 'SUCCESS');
    assert.deepEqual(status.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 0 });
    const runs = await client.listTestRuns(SET_ID);
    assert.equal(runs?.[0]?.name, 'a');
    assert.equal(runs?.[0]?.flaky, false);
    assert.deepEqual((runs?.[0] as Record<string, unknown>).artifacts, [], 'unknown extension fields are kept');
  });
});

test('listTestRuns resolves null when the members route answers 404', async () => {
  await withClient({}, async (client) => {
    assert.equal(await client.listTestRuns(SET_ID), null);
  });
});

test('errors are plain data with status, code, detail, and say whether they are transient', async () => {
  const routes: Routes = {
    status: sequence(problem(404, 'not_found', 'No test run set with this id'), problem(503, 'internal', 'down'), { status: 502, raw: '<html>Bad gateway</html>' }),
  };
  await withClient(routes, async (client) => {
    const notFound = await client.getTestRunSet(SET_ID).catch((e: unknown) => e);
    assert.ok(notFound instanceof RunsetApiError);
    assert.deepEqual(JSON.parse(JSON.stringify(notFound)), {
      name: 'RunsetApiError',
      kind: 'http',
      status: 404,
      code: 'not_found',
      title: 'not found',
      detail: 'No test run set with this id',
      transient: false,
      retryAfterMs: null,
      request: `GET /v0/test-run-sets/${SET_ID}`,
    });
    assert.equal(isTransient(notFound), false);
    assert.equal(isTransient(await client.getTestRunSet(SET_ID).catch((e: unknown) => e)), true);
    const proxy = await client.getTestRunSet(SET_ID).catch((e: unknown) => e);
    assert.ok(proxy instanceof RunsetApiError);
    assert.equal(proxy.code, 'http_502');
    assert.equal(proxy.detail, '<html>Bad gateway</html>');
    assert.equal(proxy.transient, true);
  });
});

test('a 200 that is not the contract shape is invalid_response, not a crash', async () => {
  await withClient({ status: () => ({ raw: '{"hello":"world"}' }) }, async (client) => {
    const error = await client.getTestRunSet(SET_ID).catch((e: unknown) => e);
    assert.ok(error instanceof RunsetApiError);
    assert.equal(error.kind, 'invalid_response');
    assert.equal(error.transient, false);
  });
});

test('waitForTestRunSet: unknown values keep it polling, transient errors are retried, progress is reported', async () => {
  const routes: Routes = { status: sequence(statusReply('BRAND_NEW_STATE'), problem(503, 'internal', 'blip'), statusReply('RUNNING'), statusReply('FAIL', { FAIL: 1 })) };
  await withClient(routes, async (client) => {
    const seen: string[] = [];
    const retries: number[] = [];
    const final = await client.waitForTestRunSet(SET_ID, { interval: '20ms', timeout: '5s', onProgress: (s) => seen.push(s.status), onRetry: (e) => retries.push(e.status ?? 0) });
    assert.equal(final.status, 'FAIL', 'FAIL resolves: it is an answer, not an error');
    assert.deepEqual(seen, ['BRAND_NEW_STATE', 'RUNNING', 'FAIL']);
    assert.deepEqual(retries, [503]);
  });
});

test('waitForTestRunSet rejects with kind timeout, and with the caller reason on abort', async () => {
  await withClient({ status: () => statusReply('RUNNING') }, async (client) => {
    const timedOut = await client.waitForTestRunSet(SET_ID, { interval: 20, timeout: 120 }).catch((e: unknown) => e);
    assert.ok(timedOut instanceof RunsetApiError);
    assert.equal(timedOut.kind, 'timeout');
    assert.equal(timedOut.code, 'wait_timeout');

    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user cancelled')), 60);
    const aborted = await client.waitForTestRunSet(SET_ID, { interval: 20, signal: controller.signal }).catch((e: unknown) => e);
    assert.equal((aborted as Error).message, 'user cancelled');
  });
});

test('a request slower than requestTimeout is a transient request_timeout, retried by the wait', async () => {
  const routes: Routes = { status: sequence({ ...statusReply('RUNNING'), delayMs: 400 }, statusReply('SUCCESS', { SUCCESS: 1 })) };
  await withClient(
    routes,
    async (client) => {
      const retries: string[] = [];
      const final = await client.waitForTestRunSet(SET_ID, { interval: 20, timeout: 3000, onRetry: (e) => retries.push(e.code) });
      assert.equal(final.status, 'SUCCESS');
      assert.deepEqual(retries, ['request_timeout']);
    },
    { requestTimeout: '100ms' },
  );
});

test('the key is not visible on the client object, and is redacted from echoed error bodies', async () => {
  const routes: Routes = { status: (req) => problem(400, 'invalid_id', `bad request with ${String(req.headers.authorization)}`) };
  await withClient(routes, async (client) => {
    assert.ok(!inspect(client, { showHidden: true, depth: 5 }).includes(KEY));
    assert.ok(!JSON.stringify(client).includes(KEY));
    const error = await client.getTestRunSet(SET_ID).catch((e: unknown) => e);
    assert.ok(error instanceof RunsetApiError);
    assert.equal(error.detail, 'bad request with Bearer ***');
    assert.ok(!error.message.includes(KEY) && !JSON.stringify(error).includes(KEY));
  });
});

test('the constructor rejects a missing key or an invalid URL without echoing them', () => {
  assert.throws(() => new RunsetClient({ url: 'not a url', apiKey: KEY }), (e: Error) => e instanceof TypeError && !e.message.includes(KEY));
  assert.throws(() => new RunsetClient({ url: 'http://x/api', apiKey: '' }), /apiKey/);
});

test('parseRetryAfter: delta-seconds, HTTP date, garbage', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  assert.equal(parseRetryAfter('3', now), 3000);
  assert.equal(parseRetryAfter('0.25', now), 250);
  assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now), 5000);
  assert.equal(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now), 0, 'a past date means now');
  assert.equal(parseRetryAfter('soon', now), null);
  assert.equal(parseRetryAfter(null, now), null);
});

test('backoff is exponential, capped, jittered within [half, full], and Retry-After overrides it', () => {
  const policy = { baseMs: 100, maxMs: 1000 };
  assert.equal(backoffDelay(0, policy, null, () => 0), 50);
  assert.equal(backoffDelay(0, policy, null, () => 1), 100);
  assert.equal(backoffDelay(3, policy, null, () => 1), 800);
  assert.equal(backoffDelay(10, policy, null, () => 1), 1000);
  assert.equal(backoffDelay(10, policy, 2500, () => 1), 2500);
});

test('a refused connection is worth retrying; a URL that can never work is not', async () => {
  const { createServer } = await import('node:net');
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as { port: number }).port;
  await new Promise((resolve) => closed.close(resolve)); // nothing listens there now
  const failure = (url: string) => new RunsetClient({ url, apiKey: KEY }).getTestRunSet(SET_ID).then(() => assert.fail('answered'), (e: unknown) => e);
  const refused = await failure(`http://127.0.0.1:${port}/api`);
  assert.ok(refused instanceof RunsetApiError && refused.kind === 'network' && isTransient(refused), String(refused));
  const badPort = await failure('http://127.0.0.1:9/api'); // fetch refuses this port outright
  assert.ok(badPort instanceof RunsetApiError && badPort.kind === 'network' && !isTransient(badPort), String(badPort));
});
