/**
 * GET /api/v0/worker/notices — what the service tells a worker, as it happens:
 * one streamed response per worker process, a JSON line per notice
 * (application/x-ndjson): `runs-waiting` (claim now), `set-cancelled` (stop
 * its members), and `ping` every 15 s.
 *
 * A streamed response rather than a long-poll: a notice leaves the moment the
 * store tells this process (an in-process event, or LISTEN/NOTIFY), with no
 * gap between two polls in which one could be missed, and one idle connection
 * per worker instead of a request every few seconds. The pings keep proxies
 * from closing it as idle (nginx: turn proxy_buffering off, or rely on the
 * X-Accel-Buffering header sent here). A worker that reconnects treats the
 * reconnection as a wake-up; a cancel it missed meanwhile still stops its
 * members at their next heartbeat (the lease is gone).
 */
import { PassThrough } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import { WorkerNotice } from '../../core/wire-worker.js';
import type { WorkerLink } from '../../worker-link/link.js';
import type { AppDeps } from '../deps.js';
import { seesSetEnv } from '../permission.js';
import { BEARER_ONLY, named, problems } from './common.js';
import type { Closing } from '../worker-claims.js';

const PING_MS = 15_000;
/** How often an open stream's key is checked (the key cache keeps an answer 500 ms): a revoke ends it within a second. */
const KEY_CHECK_MS = 500;
/** A worker that leaves this much of its notices unread is dropped (it reconnects if alive). */
const MAX_BUFFERED_BYTES = 64 * 1024;

export const workerNoticeRoutes: FastifyPluginAsync<{ deps: AppDeps; link: WorkerLink; closing: Closing }> = (app, { deps, link, closing }) => {
  app.get(
    '/notices',
    {
      schema: {
        summary: 'Stream what the service tells workers: wake-ups, cancelled sets, pings',
        description: 'One JSON object per line (application/x-ndjson), for as long as the connection stays open. A key limited to environments hears only of their sets\' cancels.',
        tags: ['Worker protocol'],
        operationId: 'workerNotices',
        security: BEARER_ONLY,
        response: {
          200: { description: 'The notices, one per line', content: { 'application/x-ndjson': { schema: named(WorkerNotice) } } },
          ...problems(401, 403),
        },
      },
    },
    (request, reply) => {
      const key = request.apiKey;
      const stream = new PassThrough();
      const send = (notice: WorkerNotice) => {
        if (stream.writableLength > MAX_BUFFERED_BYTES) stream.destroy();
        else if (!stream.destroyed) stream.write(`${JSON.stringify(notice)}\n`);
      };
      // Many wake-ups in one turn of the event loop are one notice.
      let waking = false;
      const offWaiting = link.onRunsWaiting(() => {
        if (waking) return;
        waking = true;
        setImmediate(() => {
          waking = false;
          send({ type: 'runs-waiting' });
        });
      });
      const offCancel = link.onSetCancelled((setId) => {
        if (key?.envs === null) return send({ type: 'set-cancelled', setId });
        deps.store.sets.get(setId).then(
          (set) => set && seesSetEnv(key, set.env) && send({ type: 'set-cancelled', setId }),
          (err: unknown) => request.log.warn({ err, set: setId }, 'reading a cancelled set for a worker\'s notice failed; its members stop at their next heartbeat'),
        );
      });
      const ping = setInterval(() => send({ type: 'ping' }), PING_MS);
      // A stream lasts only as long as its key: a revoked or expired one ends it within
      // a second (the key cache holds an answer KEY_CHECK_MS at most, and is read this often).
      const keyCheck = setInterval(() => {
        deps.auth.authenticate(request.headers.authorization).then(
          (live) => live === undefined && stream.destroy(),
          (err: unknown) => request.log.warn({ err }, 'checking a notices stream\'s key failed; it is checked again in a moment'),
        );
      }, KEY_CHECK_MS);
      const end = () => {
        clearInterval(ping);
        clearInterval(keyCheck);
        offWaiting();
        offCancel();
        stream.end();
      };
      reply.raw.once('close', end);
      void closing.promise.then(end);
      send({ type: 'ping' }); // the headers go out now: the worker knows it is connected
      return reply
        .header('content-type', 'application/x-ndjson')
        .header('cache-control', 'no-store')
        .header('x-accel-buffering', 'no')
        .send(stream);
    },
  );
  return Promise.resolve();
};
