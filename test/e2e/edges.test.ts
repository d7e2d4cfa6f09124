/**
 * The edges of the contract over real HTTP, against the real server: whatever
 * layer refuses a request (Node's parser, the router, a route), the answer is
 * problem+json with a stable code and echoes little of the request; the route
 * is matched before the body is read; the Bearer scheme is case-insensitive;
 * a client that goes away mid-body is no error of the server's.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { ERRORS, type ErrorCode } from '../../src/core/errors.js';
import { api, assertNoLeakedServers, startRunset, type ApiAnswer, type RunningServer } from '../helpers/server.js';
import { MIXED_CONFIG, SECRET_VALUE } from './fixtures.js';

const SET_ID = '3f0e5a4e-2b1c-4d7a-9c1e-8a2b3c4d5e6f';
const LONG = 'x'.repeat(5000);

function assertProblem(res: { status: number; headers: Headers; text: string }, code: ErrorCode): Record<string, unknown> {
  assert.equal(res.status, ERRORS[code].status, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const body = JSON.parse(res.text) as Record<string, unknown>;
  assert.equal(body.code, code);
  assert.equal(body.title, ERRORS[code].title);
  assert.equal(body.status, ERRORS[code].status);
  assert.doesNotMatch(res.text, /x{201}/, 'echoes at most 200 characters of the request');
  return body;
}

/** One request written byte for byte on a socket (fetch would refuse or fix what these tests send). */
function rawHttp(server: RunningServer, lines: string[], body = ''): Promise<{ status: number; headers: Headers; text: string }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`));
    let raw = '';
    socket.on('data', (d: Buffer) => (raw += d.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', text = ''] = raw.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers = new Headers(headerLines.map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()] as [string, string]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, text });
    });
  });
}

describe('the edges of the contract', () => {
  let server: RunningServer;
  before(async () => {
    server = await startRunset({ config: MIXED_CONFIG, env: { E2E_SECRET_TOKEN: SECRET_VALUE, RUNSET_LOG_LEVEL: 'debug' }, args: ['--workers', '1'] });
  });
  after(async () => {
    assert.equal(await server.stop(), 0);
    assert.ok(!server.logs().includes(server.apiKey), 'the key never appears in logs');
  });

  test('a malformed %-escape in the path → 400 invalid_url', async () => {
    assertProblem(await api(server, 'GET', '/v0/test-run-sets/%'), 'invalid_url');
    assertProblem(await api(server, 'GET', '/v0/test-run-sets/%zz/test-runs'), 'invalid_url');
  });

  test('an over-long id → 400 invalid_id, the id not echoed', async () => {
    const body = assertProblem(await api(server, 'GET', `/v0/test-run-sets/${LONG}`), 'invalid_id');
    assert.match(body.detail as string, /UUID/);
    assertProblem(await api(server, 'GET', `/v0/test-run-sets/${'a'.repeat(101)}`), 'invalid_id');
    assertProblem(await api(server, 'POST', `/v0/test-run-sets/${LONG}/cancel`), 'invalid_id');
  });

  test('an unknown route → 404, its path echoed only in part', async () => {
    const body = assertProblem(await api(server, 'GET', `/v0/${LONG}`), 'not_found');
    assert.match(body.detail as string, /5008 characters/);
    assertProblem(await api(server, 'GET', '/v0/nothing-here'), 'not_found');
  });

  test('a known path with another method → 405 method_not_allowed with Allow', async () => {
    const del = await api(server, 'DELETE', `/v0/test-run-sets/${SET_ID}`);
    assertProblem(del, 'method_not_allowed');
    assert.equal(del.headers.get('allow'), 'GET, HEAD');
    const get = await api(server, 'GET', `/v0/test-run-sets/${SET_ID}/cancel`);
    assertProblem(get, 'method_not_allowed');
    assert.equal(get.headers.get('allow'), 'POST');
    const put = await api(server, 'PUT', '/v0/test-run-sets', { body: { env: 'staging' } });
    assert.equal(put.headers.get('allow'), 'GET, HEAD, POST');
    assertProblem(put, 'method_not_allowed');
  });

  test('the route is matched before the body is read: unknown route + broken JSON → 404, wrong method → 405', async () => {
    const broken = { rawBody: '{"env":', headers: { 'content-type': 'application/json' } };
    assertProblem(await api(server, 'POST', '/v0/nothing-here', broken), 'not_found');
    assertProblem(await api(server, 'PATCH', `/v0/test-run-sets/${SET_ID}`, broken), 'method_not_allowed');
  });

  test('no answer echoes more than 200 characters of what it was sent', async () => {
    const json = { 'content-type': 'application/json' };
    const answers: Array<[ApiAnswer, ErrorCode]> = [
      [await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', [LONG]: 1 } }), 'unknown_field'],
      [await api(server, 'POST', '/v0/test-run-sets', { rawBody: '{}', headers: { 'content-type': `text/${LONG}` } }), 'unsupported_media_type'],
      [await api(server, 'GET', `/v0/test-run-sets?${LONG}=1`), 'invalid_query'],
      [await api(server, 'POST', '/v0/test-run-sets', { rawBody: `{"env":"${LONG}`, headers: json }), 'invalid_json'],
      [await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', envOverride: { [LONG.slice(0, 256)]: 'v' } } }), 'undeclared_variable'],
      [await api(server, 'POST', '/v0/test-run-sets', { body: { env: LONG.slice(0, 128) } }), 'unknown_environment'],
    ];
    for (const [res, code] of answers) assertProblem(res, code);
  });

  test('the Bearer scheme in any case, with spaces and tabs around it', async () => {
    for (const auth of [`bearer ${server.apiKey}`, `BEARER ${server.apiKey}`, `Bearer \t ${server.apiKey}\t`, `bEaReR  ${server.apiKey}`]) {
      const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' }, auth });
      assert.equal(created.status, 200, `${auth.slice(0, 8)}…: ${created.text}`);
      assert.equal((await api(server, 'GET', `/v0/test-run-sets/${created.body.testRunSetId as string}`, { auth })).status, 200);
    }
    assertProblem(await api(server, 'GET', `/v0/test-run-sets/${SET_ID}`, { auth: `Bearer${server.apiKey}` }), 'unauthorized');
    assertProblem(await api(server, 'GET', `/v0/test-run-sets/${SET_ID}`, { auth: `Token ${server.apiKey}` }), 'unauthorized');
  });

  test('the dashboard sign-in takes the key with spaces around it or a pasted "bearer " prefix', async () => {
    for (const key of [`  ${server.apiKey} `, `bearer ${server.apiKey}`, `Bearer\t${server.apiKey}`]) {
      const res = await api(server, 'POST', '/v0/session', { body: { key }, auth: null });
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers.get('set-cookie') ?? '', /runset_session=/);
    }
    assertProblem(await api(server, 'POST', '/v0/session', { body: { key: `bearer ${server.apiKey}x` }, auth: null }), 'unauthorized');
  });

  test('headers over 16 KiB → 431 headers_too_large as problem+json', async () => {
    const { hostname, port } = new URL(server.url);
    const res = await new Promise<{ status: number; headers: Headers; text: string }>((resolve, reject) => {
      const req = httpRequest({ hostname, port, path: '/api/health', headers: { 'x-padding': 'x'.repeat(20_000) } }, (r) => {
        let text = '';
        r.on('data', (d: Buffer) => (text += d.toString()));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, headers: new Headers(r.headers as Record<string, string>), text }));
      });
      req.on('error', reject);
      req.end();
    });
    assertProblem(res, 'headers_too_large');
  });

  test('an Expect other than 100-continue → 417 expectation_failed; a request that is not HTTP → 400 malformed_request', async () => {
    assertProblem(await rawHttp(server, ['GET /api/health HTTP/1.1', 'Host: x', 'Expect: teapot', 'Connection: close']), 'expectation_failed');
    assertProblem(await rawHttp(server, ['GET /api/health HTTP/1.1', 'Host: x', 'Content-Length: nope']), 'malformed_request');
  });

  test('a client that goes away mid-body is logged at debug, not as an error', async () => {
    const { hostname, port } = new URL(server.url);
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(
          ['POST /api/v0/test-run-sets HTTP/1.1', 'Host: x', `Authorization: Bearer ${server.apiKey}`, 'Content-Type: application/json', 'Content-Length: 1000', '', '{"env":'].join('\r\n'),
        );
        setTimeout(() => socket.destroy(), 100);
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    // The server logs once it notices; then a request on a new connection proves it still answers.
    const until = Date.now() + 5000;
    while (!server.logs().includes('client went away') && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const line = server.logs().split('\n').find((l) => l.includes('client went away')) ?? '';
    assert.equal((JSON.parse(line) as { level: number }).level, 20, 'debug');
    assert.ok(!server.logs().includes('"level":50'), 'nothing at error level');
    assert.equal((await api(server, 'GET', '/health', { auth: null })).status, 200);
  });
});

after(() => assertNoLeakedServers());
