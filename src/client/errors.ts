/**
 * The one error the client throws. It is plain data underneath (`toJSON`), so it
 * can cross a process boundary or be logged as JSON, and it says by itself
 * whether trying again may help (`transient`) — callers never match messages.
 */
import type { ErrorCode } from '../core/errors.js';

/**
 * - http: the server answered with a non-2xx status;
 * - network: no answer at all (refused, reset, DNS);
 * - request_timeout: one request took longer than the client's per-request limit;
 * - timeout: the caller's overall wait ran out (`waitForTestRunSet`);
 * - aborted: the caller's AbortSignal fired;
 * - invalid_response: a 2xx whose body is not the shape the contract promises.
 */
export type RunsetErrorKind = 'http' | 'network' | 'request_timeout' | 'timeout' | 'aborted' | 'invalid_response';

/**
 * The server's registered codes (src/core/errors.ts), the client's own, or
 * `http_<status>` when an answer carried no problem document (e.g. a proxy's 502).
 */
export type RunsetErrorCodeValue =
  | ErrorCode
  | 'network_error'
  | 'request_timeout'
  | 'wait_timeout'
  | 'aborted'
  | 'invalid_response'
  | `http_${number}`
  | (string & Record<never, never>);

export interface RunsetApiErrorData {
  name: 'RunsetApiError';
  kind: RunsetErrorKind;
  /** HTTP status, or null when there was no answer. */
  status: number | null;
  code: RunsetErrorCodeValue;
  title: string;
  detail: string;
  transient: boolean;
  /** From `Retry-After`, in milliseconds; null when absent or unparseable. */
  retryAfterMs: number | null;
  /** The request, without host or headers: `GET /v0/test-run-sets/…`. */
  request: string | null;
}

export class RunsetApiError extends Error {
  readonly kind: RunsetErrorKind;
  readonly status: number | null;
  readonly code: RunsetErrorCodeValue;
  readonly title: string;
  readonly detail: string;
  readonly transient: boolean;
  readonly retryAfterMs: number | null;
  readonly request: string | null;

  /** `options.cause`: for a network failure, the socket error, which tells whether it may pass (see isTransientFailure). */
  constructor(data: Omit<RunsetApiErrorData, 'name' | 'transient'>, options?: { cause?: unknown }) {
    super(messageOf(data), options);
    this.name = 'RunsetApiError';
    this.kind = data.kind;
    this.status = data.status;
    this.code = data.code;
    this.title = data.title;
    this.detail = data.detail;
    this.transient = isTransientFailure(data.kind, data.status, options?.cause);
    this.retryAfterMs = data.retryAfterMs;
    this.request = data.request;
  }

  toJSON(): RunsetApiErrorData {
    return {
      name: 'RunsetApiError',
      kind: this.kind,
      status: this.status,
      code: this.code,
      title: this.title,
      detail: this.detail,
      transient: this.transient,
      retryAfterMs: this.retryAfterMs,
      request: this.request,
    };
  }
}

function messageOf(data: Omit<RunsetApiErrorData, 'name' | 'transient'>): string {
  const where = data.request ? `${data.request}: ` : '';
  const status = data.status === null ? '' : `${data.status} `;
  const detail = data.detail && data.detail !== data.title ? ` — ${data.detail}` : '';
  return `${where}${status}${data.title} (${data.code})${detail}`;
}

/**
 * Transient = may succeed if asked again later: a per-request timeout, 408, 429,
 * every 5xx, and a network failure that may pass (a refused or dropped
 * connection: the server restarting). A network failure whose `cause` carries
 * no such socket error (a bad URL, an unknown host) will not pass however long
 * we wait; without a `cause` to tell, a network failure counts as transient.
 * Every other 4xx says the request itself is wrong (bad key, unknown id,
 * invalid body) and will not get better by repeating it.
 */
export function isTransientFailure(kind: RunsetErrorKind, status: number | null, cause?: unknown): boolean {
  if (kind === 'request_timeout') return true;
  if (kind === 'network') return cause === undefined || TRANSIENT_NETWORK_CODES.has(networkCodeOf(cause) ?? '');
  if (kind !== 'http' || status === null) return false;
  return status >= 500 || status === 429 || status === 408;
}

/** True for a RunsetApiError that is worth retrying; false for anything else. */
export function isTransient(error: unknown): boolean {
  return error instanceof RunsetApiError && error.transient;
}

/**
 * `Retry-After` is either delta-seconds or an HTTP date (RFC 9110 §10.2.3).
 * Fractional seconds are accepted too: harmless, and some proxies send them.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}

/** Socket-level failures worth retrying, from Node (errno) and from fetch's undici. */
const TRANSIENT_NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH',
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED',
]);

/** The first error code along a cause chain (fetch wraps the socket's error as its cause). */
function networkCodeOf(error: unknown): string | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
