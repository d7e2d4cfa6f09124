/**
 * The `http` executor: one request with undici's fetch, then the
 * expectations of the test, first failing one reported on one line.
 *
 * Every connection goes through an outbound dispatcher (src/net/outbound.ts):
 * link-local and cloud metadata addresses are refused, private ones unless the
 * environment allows them, after DNS and on every redirect; the refusal is the
 * member's error.
 *
 * Redirects are followed (fetch's default): a check of `/` that lands on
 * `/login` behaves as in a browser, and the transcript says where it ended.
 * Request header values are never written to the output (they often carry
 * tokens); the URL and the response are, as users need them to debug. Masking
 * secret values in what is returned is the caller's job: only it knows which
 * variables are secret.
 */
import { STATUS_CODES } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import type { Dispatcher, Response } from 'undici';
import type { ExecutionContext, ExecutionResult, Executor, HttpTestSpec, OutboundPolicy } from '../../core/types.js';
import { DEFAULT_OUTBOUND_POLICY, outboundDispatcher, outboundRefusalIn, undici, type OutboundOptions } from '../../net/outbound.js';
import { abortMessage } from '../abort.js';
import { OUTPUT_LIMIT_BYTES, tailOf } from '../tail-buffer.js';
import { substitute, substituteDeep } from '../template.js';

/** Larger bodies are not held in memory: an e2e check has no business downloading that much. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const PREVIEW_CHARS = 200;

/** Picks the dispatcher of a member's outbound policy. */
type DispatcherFor = (policy: OutboundPolicy) => Dispatcher;

/** The http executor; `outbound` injects name resolution (tests) into its dispatchers. */
export function createHttpExecutor(outbound: OutboundOptions = {}): Executor<HttpTestSpec> {
  // One dispatcher per policy, made on first use and kept: its connections are reused across members.
  const dispatchers = new Map<boolean, Dispatcher>();
  const dispatcherFor: DispatcherFor = (policy) => {
    let dispatcher = dispatchers.get(policy.allowPrivateTargets);
    if (!dispatcher) dispatchers.set(policy.allowPrivateTargets, (dispatcher = outboundDispatcher(policy, outbound)));
    return dispatcher;
  };
  return Object.freeze({ type: 'http' as const, run: (spec: HttpTestSpec, ctx: ExecutionContext) => runHttpTest(spec, ctx, dispatcherFor) });
}

export const httpExecutor: Executor<HttpTestSpec> = createHttpExecutor();

interface PreparedRequest {
  method: string;
  url: string;
  /** Pairs, not an object: any header name is safe as a pair. */
  headers: [string, string][];
  body: string | undefined;
}

async function runHttpTest(spec: HttpTestSpec, ctx: ExecutionContext, dispatcherFor: DispatcherFor): Promise<ExecutionResult> {
  let request: PreparedRequest;
  try {
    request = prepareRequest(spec, ctx.variables);
  } catch (error) {
    return { passed: false, error: `cannot build the request: ${errorText(error)}`, output: '' };
  }
  const head = [`> ${request.method} ${request.url}`, `> ${describeRequest(request)}`];
  if (ctx.signal.aborted) return { passed: false, error: abortMessage(ctx.signal), output: head.join('\n') };

  let response: Response;
  let body: string;
  try {
    response = await undici().fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
      signal: ctx.signal,
      redirect: 'follow',
      dispatcher: dispatcherFor(ctx.outbound ?? DEFAULT_OUTBOUND_POLICY),
    });
    body = await readBody(response, ctx.signal);
  } catch (error) {
    if (ctx.signal.aborted) return { passed: false, error: abortMessage(ctx.signal), output: head.join('\n') };
    const reason = error instanceof BodyTooLarge ? error.message : networkReason(error);
    return { passed: false, error: `${request.method} ${request.url} failed: ${reason}`, output: head.join('\n') };
  }

  const statusLine = `${response.status} ${response.statusText || STATUS_CODES[response.status] || ''}`.trim();
  head.push(`< ${statusLine}`, `< ${countHeaders(response.headers)} headers`);
  if (response.redirected) head.push(`< (after redirects, from ${response.url})`);
  const error = checkExpectations(spec.expect, response.status, statusLine, body);
  return { passed: error === null, error, output: transcript(head, body) };
}

function prepareRequest(spec: HttpTestSpec, variables: Readonly<Record<string, string>>): PreparedRequest {
  const { method, url, headers = {}, body } = spec.request;
  const prepared: PreparedRequest = { method, url: substitute(url, variables), headers: [], body: undefined };
  try {
    new URL(prepared.url);
  } catch {
    throw new Error(`invalid URL ${JSON.stringify(prepared.url)}`);
  }
  for (const [name, value] of Object.entries(headers)) {
    const filled = substitute(value, variables);
    // Checked here so fetch's own error, which quotes the value (maybe a secret), is never reached.
    if (/[\r\n\0]/.test(filled)) throw new Error(`header ${name} has an invalid value (line break or NUL after substitution)`);
    prepared.headers.push([name, filled]);
  }
  if (typeof body === 'string') {
    prepared.body = substitute(body, variables);
  } else if (body !== undefined) {
    prepared.body = JSON.stringify(substituteDeep(body, variables));
    const hasType = prepared.headers.some(([name]) => name.toLowerCase() === 'content-type');
    if (!hasType) prepared.headers.push(['content-type', 'application/json']);
  }
  return prepared;
}

function describeRequest(request: PreparedRequest): string {
  const headers = request.headers.length;
  const body = request.body === undefined ? 'no body' : `${Buffer.byteLength(request.body)}-byte body`;
  return `${headers} header${headers === 1 ? '' : 's'}, ${body}`;
}

class BodyTooLarge extends Error {}

/** The body as text, refusing to hold more than MAX_BODY_BYTES. */
async function readBody(response: Response, signal: AbortSignal): Promise<string> {
  if (!response.body) return '';
  const decoder = new TextDecoder();
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const parts: string[] = [];
  let size = 0;
  try {
    for (;;) {
      signal.throwIfAborted();
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BODY_BYTES) throw new BodyTooLarge(`response body larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB`);
      parts.push(decoder.decode(value, { stream: true }));
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    throw error;
  }
  parts.push(decoder.decode());
  return parts.join('');
}

/** fetch says only "fetch failed"; the reason (a refusal, ECONNREFUSED, ENOTFOUND, a TLS code…) is in its cause. */
function networkReason(error: unknown): string {
  const refused = outboundRefusalIn(error);
  if (refused) return refused.message;
  const cause: unknown = error instanceof Error ? error.cause : undefined;
  for (const candidate of [cause, ...(cause instanceof AggregateError ? (cause.errors as unknown[]) : []), error]) {
    const code = (candidate as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && code !== '') return code;
  }
  return cause instanceof Error ? cause.message : errorText(error);
}

function countHeaders(headers: Headers): number {
  let count = 0;
  headers.forEach(() => count++);
  return count;
}

// ── expectations ────────────────────────────────────────────────────────────

function checkExpectations(expect: HttpTestSpec['expect'], status: number, statusLine: string, body: string): string | null {
  if (expect.status !== undefined ? status !== expect.status : status < 200 || status > 299) {
    return `expected ${expect.status !== undefined ? `status ${expect.status}` : 'a 2xx status'}, got ${statusLine}`;
  }
  if (expect.bodyContains !== undefined && !body.includes(expect.bodyContains)) {
    return `expected body to contain ${JSON.stringify(expect.bodyContains)}, got ${preview(body)}`;
  }
  if (Object.hasOwn(expect, 'json')) {
    let actual: unknown;
    try {
      actual = JSON.parse(body);
    } catch {
      return `expected a JSON body, got ${preview(body)}`;
    }
    return jsonMismatch(expect.json, actual, '$');
  }
  return null;
}

/**
 * Where `actual` departs from `expected`: objects match as subsets (extra keys
 * are fine, at any depth); arrays and scalars must be equal, as the order and
 * length of a list usually matter.
 */
export function jsonMismatch(expected: unknown, actual: unknown, at = '$'): string | null {
  if (isObject(expected)) {
    if (!isObject(actual)) return `expected JSON at ${at} to be an object, got ${render(actual)}`;
    for (const [key, value] of Object.entries(expected)) {
      const child = `${at}${/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`;
      if (!Object.hasOwn(actual, key)) {
        return `expected JSON at ${child} to ${isObject(value) ? 'contain' : 'equal'} ${render(value)}, got nothing (no such key)`;
      }
      const mismatch = jsonMismatch(value, actual[key], child);
      if (mismatch !== null) return mismatch;
    }
    return null;
  }
  return isDeepStrictEqual(expected, actual) ? null : `expected JSON at ${at} to equal ${render(expected)}, got ${render(actual)}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function render(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}

/** The start of a body on one line, for "got …". */
function preview(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  if (flat === '') return 'an empty body';
  return `"${flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS)}…` : flat}"`;
}

/** Request and status lines, then the body's tail within what is left of the output budget. */
function transcript(head: readonly string[], body: string): string {
  const top = `${head.join('\n')}\n\n`;
  const budget = OUTPUT_LIMIT_BYTES - Buffer.byteLength(top) - 80;
  const kept = tailOf(body, budget);
  const cut = kept.length < body.length ? `[… ${Buffer.byteLength(body) - Buffer.byteLength(kept)} bytes of body not shown]\n` : '';
  return `${top}${cut}${kept}`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
