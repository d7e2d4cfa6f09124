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

export function requester(url: string, key: string, closed: AbortSignal): Requester {
  const base = url.replace(/\/+$/, '');
  const authorization = `Bearer ${key}`;
  const once = async (method: string, route: string, init: Parameters<Requester['send']>[2] = {}) => {
    const headers: Record<string, string> = { authorization };
    let body: string | AsyncIterable<Uint8Array> | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    } else if (init.body !== undefined) {
      headers['content-type'] = init.contentType ?? 'application/octet-stream';
      body = init.body;
    }
    const signal = init.signal ? AbortSignal.any([init.signal, closed]) : closed;
    let res: Response;
    try {
      // Node's fetch streams an async iterable body (with duplex: 'half'); its types know only web bodies.
      res = await fetch(`${base}${route}`, { method, headers, body: body as string | undefined, signal, ...(init.body ? { duplex: 'half' } : {}) });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new LinkUnavailableError(`${method} ${route}: the API at ${base} is out of reach (${causeOf(err)})`, { cause: err });
    }
    const text = await res.text().catch(() => '');
    if ((res.status >= 200 && res.status < 300) || res.status === 409) return { status: res.status, body: text ? parse(text) : undefined };
    const detail = problemDetail(text);
    if (res.status >= 500 || res.status === 429 || res.status === 408) {
      throw new LinkUnavailableError(`${method} ${route}: the API answered ${res.status}${detail ? `: ${detail}` : ''}`);
    }
    throw new LinkRefusedError(res.status, `${method} ${route}: the API refused it with ${res.status}${detail ? `: ${detail}` : ''}`);
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

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return err instanceof Error ? err.message : String(err);
}
