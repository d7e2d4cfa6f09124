/**
 * A `fetch` that answers from this very app (Fastify's inject), for the MCP
 * endpoint's RunsetClient: its requests run every hook a network request runs
 * (the key check, the role and environment rules, the masking of secrets)
 * without a loopback socket or knowing the address the server listens on.
 */
import type { FastifyInstance } from 'fastify';

function headersOf(init: RequestInit | undefined): Record<string, string> {
  return Object.fromEntries(new Headers(init?.headers).entries());
}

function bodyOf(init: RequestInit | undefined): string | Buffer | undefined {
  const body = init?.body;
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('local fetch: only string and byte bodies are sent');
}

function aborted(signal: AbortSignal | null | undefined): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (!signal) return;
    const fail = () => reject(signal.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError'));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/**
 * `prefix`: the path the public address adds before /api (a --public-url of
 * https://example.com/runset: "/runset"), which a proxy strips before runset.
 */
export function localFetch(app: FastifyInstance, prefix = ''): typeof globalThis.fetch {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const path = prefix && url.pathname.startsWith(`${prefix}/`) ? url.pathname.slice(prefix.length) : url.pathname;
    const injected = app.inject({
      method: (init?.method ?? 'GET') as 'GET',
      url: `${path}${url.search}`,
      headers: headersOf(init),
      payload: bodyOf(init),
    });
    // inject cannot be aborted: the caller stops waiting, and the answer is dropped when it comes.
    const res = await Promise.race([injected, aborted(init?.signal)]);
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
    }
    const empty = res.statusCode === 204 || res.statusCode === 304;
    return new Response(empty ? null : res.rawPayload, { status: res.statusCode, statusText: res.statusMessage, headers });
  };
}
