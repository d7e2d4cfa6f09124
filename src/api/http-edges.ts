/**
 * Refusals made before any route runs — by Node's HTTP parser, by the router,
 * or while the server closes — answered as problem+json with a stable code,
 * like every other error (Node's and Fastify's own answers are plain JSON or
 * empty). The route is matched before the body is read: an unknown route with
 * a broken JSON body is 404, a known path with another method 405 with `Allow`.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { echo, problemOf, type Problem } from '../core/errors.js';
import { sendProblem } from './problems.js';

/** Fastify's router refuses a path parameter longer than this (its default), before any schema runs. */
export const MAX_PARAM_LENGTH = 100;
const UUID_EXAMPLE = '3f0e5a4e-2b1c-4d7a-9c1e-8a2b3c4d5e6f';
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Fastify's `frameworkErrors`: what the router refuses while matching the path. */
export function answerFrameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void sendProblem(reply, problemOf('invalid_id', `the id in the path is over ${MAX_PARAM_LENGTH} characters; expected a UUID such as ${UUID_EXAMPLE}`));
  } else if (err.code === 'FST_ERR_BAD_URL') {
    void sendProblem(reply, problemOf('invalid_url', 'the path has a malformed %-escape: a "%" must be followed by two hex digits (send "%25" for "%" itself)'));
  } else {
    request.log.error({ err }, 'router error');
    void sendProblem(reply, problemOf('internal', 'the server failed to route the request; see its log for details'));
  }
}

/** The methods the router has for this path (HEAD with every GET), none when no route matches it. */
export function allowedMethods(app: FastifyInstance, path: string): string[] {
  return METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
}

function answerNoRoute(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0] ?? '/';
  const allowed = allowedMethods(app, path);
  if (allowed.length > 0) {
    void reply.header('allow', allowed.join(', '));
    return sendProblem(reply, problemOf('method_not_allowed', `${request.method} is not accepted on ${echo(path)}; allowed: ${allowed.join(', ')}`));
  }
  return sendProblem(reply, problemOf('not_found', `no route ${request.method} ${echo(path)}; the API is described at /api/openapi.json`));
}

/**
 * One onRequest hook at the root: unknown routes and methods are answered
 * here, before any body is read; and once the server is closing, new requests
 * get 503 `shutting_down` (Fastify's own return503OnClosing answers plain JSON).
 */
export function installRouteEdges(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (request.is404) return void answerNoRoute(app, request, reply);
    if (closing) {
      void reply.header('connection', 'close').header('retry-after', '2');
      return void sendProblem(reply, problemOf('shutting_down', 'this server is shutting down; retry in a few seconds (another instance, or this one once restarted)'));
    }
    done();
  });
  // Node answers an Expect other than 100-continue with an empty 417 unless someone listens.
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const problem = problemOf('expectation_failed', 'the only Expect this server meets is "100-continue"; send the request without Expect');
    const body = JSON.stringify(problem);
    res.writeHead(problem.status, { 'content-type': 'application/problem+json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
    res.end(body);
    req.resume();
  });
}

/** A problem written straight to a socket that Node's parser gave up on (no request object exists). */
function rawProblem(problem: Problem): string {
  const body = JSON.stringify(problem);
  return (
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
    `Content-Type: application/problem+json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** What Node's parser refused, as a problem; undefined when the client is gone and nothing can be sent. */
export function clientErrorProblem(err: NodeJS.ErrnoException): Problem | undefined {
  switch (err.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return problemOf('headers_too_large', 'the request line and headers are over 16 KiB together; send shorter headers (cookies, tokens) or a shorter URL');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return problemOf('request_timeout', 'the request did not arrive in time; send it again');
    default:
      return problemOf('malformed_request', `the request is not valid HTTP/1.1 (${err.code ?? 'parse error'})`);
  }
}

/** Fastify's `clientErrorHandler` (Node's 'clientError'): answered at debug level, this is the client's doing. */
export function answerClientError(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  const problem = socket.destroyed ? undefined : clientErrorProblem(err);
  this.log.debug({ code: err.code, status: problem?.status }, 'client error');
  if (problem && socket.writable) socket.write(rawProblem(problem));
  socket.destroy();
}
