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
  const once = async (method: string, route: string, init: Parameters<Requester['send']>[2] = {}) => {
    const headers: Record<string, string> = { authorization };
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
      throw new LinkUnavailableError(`${method} ${route}: the API at ${base} is out of reach (${causeOf(err)})`, { cause: err });
    }
    const { status, text } = res;
    if ((status >= 200 && status < 300) || status === 409) return { status, body: text ? parse(text) : undefined };
    const detail = problemDetail(text);
    if (status >= 500 || status === 429 || status === 408) {
      throw new LinkUnavailableError(`${method} ${route}: the API answered ${status}${detail ? `: ${detail}` : ''}`);
    }
    throw new LinkRefusedError(status, `${method} ${route}: the API refused it with ${status}${detail ? `: ${detail}` : ''}`);
  };
  return {
    url: base,
    async send(method, route, init = {}) {
      for (let attempt = 0; ; attempt++) {
        try {
          return await once(method, route, init);
        } catch (err) {
          if (!init.retry || !(err instanceof LinkUnavailableError) || attempt + 1 >= RETRIES || closed.aborted) throw err;
          await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
        }
      }
    },
  };
}

/** Sends one request (a string body, or a stream of chunks) and reads the whole answer as text. */
function exchange(transport: typeof http | typeof https, url: URL, options: http.RequestOptions & { signal: AbortSignal }, body: string | AsyncIterable<Uint8Array> | undefined): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = transport.request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (typeof body === 'string' || body === undefined) req.end(body);
    else pipeline(Readable.from(body), req).catch(reject);
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
