import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { lazyChildLogger } from '../../src/api/request-logger.js';

function capture(): { logger: FastifyBaseLogger; lines: () => Array<Record<string, unknown>>; children: () => number } {
  const out: string[] = [];
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _enc, done) => (out.push(chunk.toString()), done()) }));
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof child>) => (children++, child(...args))) as typeof logger.child;
  return { logger, lines: () => out.map((l) => JSON.parse(l) as Record<string, unknown>), children: () => children };
}

test('a request logger binds its id only when it first logs, and then on every line', () => {
  const { logger, lines, children } = capture();
  const quiet = lazyChildLogger(logger, { reqId: 'req-1' }, {});
  assert.equal(quiet.level, 'info');
  assert.equal(children(), 0, 'a request that never logs makes no child');

  const loud = lazyChildLogger(logger, { reqId: 'req-2' }, {});
  loud.error({ err: 'x' }, 'unhandled error');
  loud.info('second');
  loud.debug('below the level');
  assert.equal(children(), 1, 'one child, made on first use');
  assert.deepEqual(lines().map((l) => [l.reqId, l.msg]), [['req-2', 'unhandled error'], ['req-2', 'second']]);
  assert.equal(loud.child({ part: 'inner' }).level, 'info');
});

test('a route with its own log options gets a real child at once', () => {
  const { logger, children } = capture();
  const child = lazyChildLogger(logger, { reqId: 'req-3' }, { level: 'warn' });
  assert.equal(children(), 1);
  assert.equal(child.level, 'warn');
});
