/**
 * What the error handler logs: a server fault at error level with its stack
 * (the answer never carries it); the Bearer header parsed whatever the case
 * of its scheme.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { installProblemHandlers } from '../../src/api/problems.js';
import { clientErrorProblem } from '../../src/api/http-edges.js';
import { asBearer, newToken, tokenOf } from '../../src/auth/keys.js';

test('a server fault is logged at error level with its stack; the answer is 500 internal without it', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>), done()) }));
  const app = Fastify({ loggerInstance: logger as unknown as FastifyBaseLogger });
  installProblemHandlers(app);
  app.get('/fault', () => Promise.reject(new Error('the disk is on fire')));
  const res = await app.inject({ method: 'GET', url: '/fault' });
  await app.close();
  assert.equal(res.statusCode, 500);
  assert.equal(res.json<{ code: string }>().code, 'internal');
  assert.doesNotMatch(res.body, /disk is on fire|at .+:\d+:\d+/);
  const logged = lines.find((l) => l.msg === 'unhandled error') as { level: number; err: { stack: string } } | undefined;
  assert.equal(logged?.level, 50);
  assert.match(logged.err.stack, /the disk is on fire\n\s+at /);
});

test('the Bearer scheme is case-insensitive, with spaces or tabs around it; nothing else is a bearer header', () => {
  const token = newToken();
  for (const header of [`Bearer ${token}`, `bearer ${token}`, `BEARER\t${token}`, ` Bearer   ${token} `]) assert.equal(tokenOf(header), token, header.slice(0, 8));
  for (const header of [undefined, '', token, `Bearer${token}`, `Bearer ${token} extra`, `Basic ${token}`, `Bearer ${token.slice(0, -1)}`]) {
    assert.equal(tokenOf(header), undefined, String(header).slice(0, 12));
  }
  assert.equal(tokenOf(asBearer(`  ${token} `)), token);
  assert.equal(tokenOf(asBearer(`bearer ${token}`)), token);
});

test("Node's parser refusals map to problems; a reset connection gets none", () => {
  assert.equal(clientErrorProblem(Object.assign(new Error('x'), { code: 'HPE_HEADER_OVERFLOW' }))?.code, 'headers_too_large');
  assert.equal(clientErrorProblem(Object.assign(new Error('x'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }))?.code, 'request_timeout');
  assert.equal(clientErrorProblem(Object.assign(new Error('x'), { code: 'HPE_INVALID_METHOD' }))?.code, 'malformed_request');
  assert.equal(clientErrorProblem(Object.assign(new Error('x'), { code: 'ECONNRESET' })), undefined);
});
