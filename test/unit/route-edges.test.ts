/**
 * A server that is closing answers new requests 503 shutting_down as
 * problem+json (Fastify's own return503OnClosing answers plain JSON), over a
 * real socket: a request arriving on a busy keep-alive connection after
 * close() began.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import Fastify from 'fastify';
import { installProblemHandlers } from '../../src/api/problems.js';
import { installRouteEdges } from '../../src/api/http-edges.js';

test('a request that arrives while the server closes → 503 shutting_down with Retry-After, the one in flight still answered', async () => {
  const app = Fastify({ return503OnClosing: false });
  installProblemHandlers(app);
  installRouteEdges(app);
  let release = () => {};
  let entered = () => {};
  const inHandler = new Promise<void>((resolve) => (entered = resolve));
  app.get('/slow', () => {
    entered();
    return new Promise((resolve) => (release = () => resolve({ ok: true })));
  });
  app.get('/fast', () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };

  const socket = connect(port, '127.0.0.1');
  let raw = '';
  socket.on('data', (d: Buffer) => {
    raw += d.toString();
  });
  socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
  await inHandler;
  const closed = app.close();
  await new Promise((r) => setTimeout(r, 50)); // close() has run its preClose hooks
  socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise((r) => setTimeout(r, 50)); // the server has read /fast
  release();
  await closed;
  await new Promise((r) => socket.once('close', r));

  const [first, second] = raw.split(/(?=HTTP\/1\.1 )/);
  assert.match(first ?? '', /^HTTP\/1\.1 200/);
  assert.match(second ?? '', /^HTTP\/1\.1 503/);
  assert.match(second ?? '', /content-type: application\/problem\+json/i);
  assert.match(second ?? '', /retry-after: 2/i);
  assert.match(second ?? '', /"code":"shutting_down"/);
});
