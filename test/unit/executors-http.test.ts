import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ExecutionContext, HttpTestSpec } from '../../src/core/types.js';
import { httpExecutor, jsonMismatch } from '../../src/executors/http/index.js';
import { findPlaceholders, substitute, substituteDeep, TemplateError } from '../../src/executors/template.js';

const JSON_DOC = { status: 'ok', data: { id: 1, tags: ['a', 'b'], owner: { name: 'x' } }, extra: true };

function route(req: IncomingMessage, res: ServerResponse, body: string): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  switch (url.pathname) {
    case '/':
      res.end('<h1>Welcome\nhome</h1>');
      return;
    case '/unavailable':
      res.writeHead(503).end('down for maintenance');
      return;
    case '/json':
      res.setHeader('content-type', 'application/json').end(JSON.stringify(JSON_DOC));
      return;
    case '/echo':
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
      return;
    case '/redirect':
      res.writeHead(302, { location: '/' }).end();
      return;
    case '/big':
      res.end(`${'x'.repeat(200 * 1024)}THE END`);
      return;
    case '/hang':
      return; // never answers: only an abort ends the request
    default:
      res.writeHead(404).end('not found');
  }
}

let server: Server;
let base: string;

before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => route(req, res, Buffer.concat(chunks).toString()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function spec(request: Partial<HttpTestSpec['request']>, expect: HttpTestSpec['expect'] = {}): HttpTestSpec {
  return {
    name: 'check',
    type: 'http',
    tags: [],
    timeoutSeconds: 5,
    retries: 0,
    request: { method: 'GET', url: '{{BASE_URL}}/', ...request },
    expect,
  };
}

function ctx(extra: Record<string, string> = {}, signal: AbortSignal = new AbortController().signal): ExecutionContext {
  return { variables: { BASE_URL: base, ...extra }, signal };
}

describe('httpExecutor', () => {
  test('passes on any 2xx by default, and writes a transcript', async () => {
    const result = await httpExecutor.run(spec({}), ctx());
    assert.equal(result.error, null);
    assert.equal(result.passed, true);
    assert.match(result.output, new RegExp(`^> GET ${base}/\n`));
    assert.match(result.output, /\n< 200 OK\n< \d+ headers\n/);
    assert.match(result.output, /Welcome\nhome/);
  });

  test('a wrong status says what was expected and what came', async () => {
    const wanted = await httpExecutor.run(spec({ url: '{{BASE_URL}}/unavailable' }, { status: 200 }), ctx());
    assert.deepEqual([wanted.passed, wanted.error], [false, 'expected status 200, got 503 Service Unavailable']);
    const any2xx = await httpExecutor.run(spec({ url: '{{BASE_URL}}/nope' }), ctx());
    assert.equal(any2xx.error, 'expected a 2xx status, got 404 Not Found');
    const exact = await httpExecutor.run(spec({ url: '{{BASE_URL}}/unavailable' }, { status: 503 }), ctx());
    assert.equal(exact.passed, true);
  });

  test('bodyContains: pass, and a miss quotes the start of the body on one line', async () => {
    assert.equal((await httpExecutor.run(spec({}, { bodyContains: 'Welcome' }), ctx())).passed, true);
    const miss = await httpExecutor.run(spec({}, { bodyContains: 'Goodbye' }), ctx());
    assert.equal(miss.passed, false);
    assert.equal(miss.error, 'expected body to contain "Goodbye", got "<h1>Welcome home</h1>"');
  });

  test('json: objects match as subsets, arrays and scalars exactly', async () => {
    const run = (json: unknown) => httpExecutor.run(spec({ url: '{{BASE_URL}}/json' }, { json }), ctx());
    assert.equal((await run({ status: 'ok', data: { owner: {} } })).error, null);
    assert.equal((await run({ status: 'down' })).error, 'expected JSON at $.status to equal "down", got "ok"');
    assert.equal((await run({ data: { tags: ['a'] } })).error, 'expected JSON at $.data.tags to equal ["a"], got ["a","b"]');
    assert.equal((await run({ data: { missing: 1 } })).error, 'expected JSON at $.data.missing to equal 1, got nothing (no such key)');
    const notJson = await httpExecutor.run(spec({}, { json: { ok: true } }), ctx());
    assert.equal(notJson.error, 'expected a JSON body, got "<h1>Welcome home</h1>"');
  });

  test('jsonMismatch names odd keys and type changes', () => {
    assert.equal(jsonMismatch({ 'a b': 1 }, { 'a b': 2 }), 'expected JSON at $["a b"] to equal 1, got 2');
    assert.equal(jsonMismatch({ a: { b: 1 } }, { a: [1] }), 'expected JSON at $.a to be an object, got [1]');
    assert.equal(jsonMismatch([{ a: 1 }], [{ a: 1, b: 2 }]), 'expected JSON at $ to equal [{"a":1}], got [{"a":1,"b":2}]');
    assert.equal(jsonMismatch(null, null), null);
  });

  test('substitutes variables in url, header values and body; object bodies go as JSON', async () => {
    const result = await httpExecutor.run(
      spec(
        {
          method: 'POST',
          url: '{{BASE_URL}}/echo?q={{ QUERY }}',
          headers: { 'X-Token': 'Bearer {{TOKEN}}' },
          body: { user: '{{USER}}', list: ['{{USER}}', 2] },
        },
        { json: { method: 'POST', url: '/echo?q=hello', headers: { 'x-token': 'Bearer s3cret', 'content-type': 'application/json' } } },
      ),
      ctx({ QUERY: 'hello', TOKEN: 's3cret', USER: 'ada' }),
    );
    assert.equal(result.error, null);
    assert.match(result.output, /"body":"\{\\"user\\":\\"ada\\",\\"list\\":\[\\"ada\\",2\]\}"/);
    assert.doesNotMatch(result.output.split('\n\n')[0] ?? '', /s3cret/, 'request header values stay out of the transcript head');
  });

  test('a string body is substituted and keeps its own content type', async () => {
    const result = await httpExecutor.run(
      spec(
        { method: 'PUT', url: '{{BASE_URL}}/echo', headers: { 'Content-Type': 'text/plain' }, body: 'hi {{USER}}' },
        { json: { body: 'hi ada', headers: { 'content-type': 'text/plain' } } },
      ),
      ctx({ USER: 'ada' }),
    );
    assert.equal(result.error, null);
  });

  test('an undefined variable fails before any request, naming it', async () => {
    const result = await httpExecutor.run(spec({ url: '{{BASE_URL}}/{{MISSING}}' }), ctx());
    assert.equal(result.passed, false);
    assert.match(result.error ?? '', /^cannot build the request: variable "MISSING" is not defined/);
  });

  test('redirects are followed', async () => {
    const result = await httpExecutor.run(spec({ url: '{{BASE_URL}}/redirect' }, { status: 200, bodyContains: 'Welcome' }), ctx());
    assert.equal(result.error, null);
  });

  test('connection refused is one line with the code', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/`;
    await new Promise((resolve) => closed.close(resolve));
    const result = await httpExecutor.run(spec({ url }), ctx());
    assert.deepEqual([result.passed, result.error], [false, `GET ${url} failed: ECONNREFUSED`]);
  });

  test('an abort stops a hanging request at once', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort('timed out after 0.1s'), 100);
    const result = await httpExecutor.run(spec({ url: '{{BASE_URL}}/hang' }), ctx({}, controller.signal));
    assert.deepEqual([result.passed, result.error], [false, 'aborted: timed out after 0.1s']);
    assert.ok(Date.now() - started < 2000, 'returned promptly');
  });

  test('the output keeps the end of a large body within 64 KiB', async () => {
    const result = await httpExecutor.run(spec({ url: '{{BASE_URL}}/big' }, { bodyContains: 'THE END' }), ctx());
    assert.equal(result.passed, true);
    assert.ok(Buffer.byteLength(result.output) <= 64 * 1024, `output is ${Buffer.byteLength(result.output)} bytes`);
    assert.match(result.output, /^> GET /);
    assert.match(result.output, /bytes of body not shown/);
    assert.match(result.output, /THE END$/);
  });
});

describe('template', () => {
  test('substitute fills {{NAME}} and {{ NAME }}, once, without re-reading values', () => {
    assert.equal(substitute('{{A}}/{{ B }}/{{A}}', { A: 'x', B: '{{A}}' }), 'x/{{A}}/x');
    assert.equal(substitute('no placeholders', {}), 'no placeholders');
  });

  test('an unknown or malformed placeholder throws, naming it', () => {
    assert.throws(() => substitute('{{NOPE}}', { A: '1' }), (error: unknown) => error instanceof TemplateError && error.variable === 'NOPE');
    assert.throws(() => substitute('{{constructor}}', {}), TemplateError);
    assert.throws(() => substitute('{{ a-b }}', {}), (error: unknown) => error instanceof TemplateError && error.variable === '{{ a-b }}');
  });

  test('substituteDeep fills strings at any depth and keeps other values', () => {
    assert.deepEqual(substituteDeep({ a: ['{{X}}', 1, null, { b: '{{X}}!' }], n: true }, { X: 'y' }), { a: ['y', 1, null, { b: 'y!' }], n: true });
  });

  test('findPlaceholders lists names, and malformed ones without a name', () => {
    assert.deepEqual(findPlaceholders('{{A}} {{ B }} {{1x}}'), [
      { raw: '{{A}}', name: 'A' },
      { raw: '{{ B }}', name: 'B' },
      { raw: '{{1x}}', name: undefined },
    ]);
  });
});
