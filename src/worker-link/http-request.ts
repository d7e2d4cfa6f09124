/**
 * One request of the worker protocol, as a worker over HTTP sends it: the key
 * in the Authorization header (and nowhere else: never in a message or a log
 * line), JSON both ways, and errors sorted the way the scheduler needs them:
 * - out of reach for a while (a network error, a 5xx, a proxy's 502/504, 429):
 *   LinkUnavailableError, which passes isStoreUnavailable, so outcome writes
 *   are retried exactly as a direct worker retries a restarting PostgreSQL;
 * - 409 lease_lost: the caller's `false` (the lease moved; nothing was written);
 * - anything else (401, 403, 400…): LinkRefusedError, with the service's detail.
 */
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { STORE_UNAVAILABLE } from '../store/store.js';
import { WORKER_PROTOCOL, WORKER_PROTOCOL_HEADER } from '../core/wire-worker.js';

export class LinkUnavailableError extends Error {
  readonly code = STORE_UNAVAILABLE;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LinkUnavailableError';
  }
}

export class LinkRefusedError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = 'LinkRefusedError';
  }
}

export interface Requester {
  /** The API's base address, ending in /api. */
  readonly url: string;
  /**
   * Sends one request. `retry`: the call may be repeated safely, and is, a few
   * times, while the service is out of reach. Answers the status and parsed
   * body of a 2xx or a 409.
   */
  send(method: string, route: string, init?: { json?: unknown; body?: AsyncIterable<Uint8Array>; contentType?: string; retry?: boolean; signal?: AbortSignal }): Promise<{ status: number; body: unknown }>;
  /**
   * GETs bytes and answers them as a stream, as they come (a suite archive).
   * Retried like a `retry` send until the answer starts; errors as for send
   * (a 404 is a LinkRefusedError of status 404).
   */
  stream(route: string, init?: { signal?: AbortSignal }): Promise<Readable>;
}

const RETRIES = 3;
/** An idle connection is closed by the worker well before the API would close it (Node's 5 s; the API keeps 72 s), so a request never goes out on a socket the API is closing. */
const IDLE_CLOSE_MS = 5_000;

/**
 * One keep-alive connection pool per requester, on node:http rather than
 * fetch: a slot's turn is one request, and fetch (undici's web streams) cost a
 * worker about twice the CPU per request on a busy machine (bench:workers).
 */
export function requester(url: string, key: string, closed: AbortSignal): Requester {
  const base = url.replace(/\/+$/, '');
  const target = new URL(base);
  const transport = target.protocol === 'https:' ? https : http;
  const agent = new transport.Agent({ keepAlive: true, timeout: IDLE_CLOSE_MS });
  closed.addEventListener('abort', () => agent.destroy(), { once: true });
  const authorization = `Bearer ${key}`;
  // Every request says which protocol revision this worker speaks (the API refuses one it does not take).
  const protocol = { [WORKER_PROTOCOL_HEADER]: String(WORKER_PROTOCOL) };
  const once = async (method: string, route: string, init: Parameters<Requester['send']>[2] = {}) => {
    const headers: Record<string, string> = { authorization, ...protocol };
    let body: string | AsyncIterable<Uint8Array> | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
      headers['content-length'] = String(Buffer.byteLength(body));
    } else if (init.body !== undefined) {
      headers['content-type'] = init.contentType ?? 'application/octet-stream';
      body = init.body;
    }
    const signal = init.signal ? AbortSignal.any([init.signal, closed]) : closed;
    let res: { status: number; text: string };
    try {
      res = await exchange(transport, new URL(`${base}${route}`), { method, headers, agent, signal }, body);
    } catch (err) {
      if (signal.aborted) throw err;
      throw unreachable(method, route, err);
    }
    const { status, text } = res;
    if ((status >= 200 && status < 300) || status === 409) return { status, body: text ? parse(text) : undefined };
    throw refusal(method, route, status, text);
  };
  const streamOnce = async (route: string, init: { signal?: AbortSignal }): Promise<Readable> => {
    const signal = init.signal ? AbortSignal.any([init.signal, closed]) : closed;
    let res: http.IncomingMessage;
    try {
      res = await respond(transport, new URL(`${base}${route}`), { method: 'GET', headers: { authorization, ...protocol }, agent, signal }, undefined);
    } catch (err) {
      if (signal.aborted) throw err;
      throw unreachable('GET', route, err);
    }
    const status = res.statusCode ?? 0;
    if (status >= 200 && status < 300) return res;
    throw refusal('GET', route, status, await textOf(res));
  };
  const unreachable = (method: string, route: string, err: unknown) =>
    new LinkUnavailableError(`${method} ${route}: the API at ${base} is out of reach (${causeOf(err)})`, { cause: err });
  const retried = async <T>(retry: boolean | undefined, work: () => Promise<T>): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await work();
      } catch (err) {
        if (!retry || !(err instanceof LinkUnavailableError) || attempt + 1 >= RETRIES || closed.aborted) throw err;
        await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
      }
    }
  };
  return {
    url: base,
    send: (method, route, init = {}) => retried(init.retry, () => once(method, route, init)),
    stream: (route, init = {}) => retried(true, () => streamOnce(route, init)),
  };
}

/** A service's refusal as the scheduler sorts it: out of reach for a while (5xx, 429, 408), or refused for good. */
function refusal(method: string, route: string, status: number, text: string): Error {
  const detail = problemDetail(text);
  if (status >= 500 || status === 429 || status === 408) {
    return new LinkUnavailableError(`${method} ${route}: the API answered ${status}${detail ? `: ${detail}` : ''}`);
  }
  return new LinkRefusedError(status, `${method} ${route}: the API refused it with ${status}${detail ? `: ${detail}` : ''}`);
}

/** Sends one request (a string body, or a stream of chunks) and answers the response as it starts. */
function respond(transport: typeof http | typeof https, url: URL, options: http.RequestOptions & { signal: AbortSignal }, body: string | AsyncIterable<Uint8Array> | undefined): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = transport.request(url, options, resolve);
    req.on('error', reject);
    if (typeof body === 'string' || body === undefined) req.end(body);
    else pipeline(Readable.from(body), req).catch(reject);
  });
}

/** Sends one request and reads the whole answer as text. */
async function exchange(transport: typeof http | typeof https, url: URL, options: http.RequestOptions & { signal: AbortSignal }, body: string | AsyncIterable<Uint8Array> | undefined): Promise<{ status: number; text: string }> {
  const res = await respond(transport, url, options, body);
  return { status: res.statusCode ?? 0, text: await textOf(res) };
}

/** The whole answer as text (events rather than an async iterator: every claim reads one, see bench:workers). */
function textOf(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The problem's detail (what the service says was wrong), if the answer is one. */
function problemDetail(text: string): string | undefined {
  const body = parse(text) as { detail?: unknown } | undefined;
  return typeof body?.detail === 'string' ? body.detail : undefined;
}

/** A socket error's code (ECONNREFUSED, ECONNRESET…), else its message. */
function causeOf(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return code;
  return err instanceof Error ? err.message : String(err);
}
