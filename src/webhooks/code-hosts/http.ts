/**
 * How code-host clients talk to an API: one JSON request through the outbound
 * address rules (as webhooks), and what a failed answer means for the outbox —
 * retried (a rate limit, a server error, no answer) or given up (the request
 * itself is wrong: bad credentials, no such repository, a body refused), so a
 * bad token is not retried for 24 hours.
 */
import type { Dispatcher } from 'undici';
import { outboundDispatcher, undici, type OutboundOptions } from '../../net/outbound.js';
import { WEBHOOK_OUTBOUND_POLICY } from '../../core/webhooks.js';

export interface HostAnswer {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The parsed JSON body; null when there is none or it is not JSON. */
  json: unknown;
}

export type HostRequest = (url: string, init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal }) => Promise<HostAnswer>;

/** Requests with undici's fetch through the outbound address rules (src/net/outbound.ts); a redirect is an answer, not followed. */
export function outboundRequest(options: OutboundOptions = {}): HostRequest {
  // Made at the first call: a server reporting to no code host never loads undici.
  let dispatcher: Dispatcher | undefined;
  return async (url, init) => {
    dispatcher ??= outboundDispatcher(WEBHOOK_OUTBOUND_POLICY, options);
    const response = await undici().fetch(url, { redirect: 'manual', dispatcher, ...init });
    const text = await response.text();
    let json: unknown = null;
    try {
      json = text === '' ? null : JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: response.status, headers: Object.fromEntries(response.headers), json };
  };
}

/** When a failed call may be tried again: with the outbox's backoff, not before `afterMs`, or never. */
export type RetryAdvice = { kind: 'backoff'; afterMs: number } | { kind: 'never' };

/** A call the code host answered with an error: its status, its own message, and whether to try again. */
export class HostCallError extends Error {
  constructor(
    message: string,
    /** Null: no call was answered (a secret missing from the environment). */
    readonly statusCode: number | null,
    readonly retry: RetryAdvice,
  ) {
    super(message);
  }
}

/**
 * The error of a non-2xx answer. Retried: 429, 5xx, and 403 when it is a rate
 * limit (GitHub answers a rate limit with 403 and `x-ratelimit-remaining: 0`
 * or `retry-after`), not before the time the host names. Anything else is the
 * request's fault and is given up with the host's message.
 */
export function answerError(what: string, answer: HostAnswer, now = Date.now()): HostCallError {
  const { status, headers } = answer;
  const message = `${what}: HTTP ${status}${hostMessage(answer.json)}`;
  const rateLimited = status === 429 || (status === 403 && (headers['x-ratelimit-remaining'] === '0' || headers['retry-after'] !== undefined));
  if (rateLimited) return new HostCallError(`${message} (rate limited)`, status, { kind: 'backoff', afterMs: waitOf(headers, now) });
  if (status >= 500) return new HostCallError(message, status, { kind: 'backoff', afterMs: 0 });
  return new HostCallError(message, status, { kind: 'never' });
}

/** `retry-after` (seconds), else `x-ratelimit-reset` (epoch seconds), else nothing. */
function waitOf(headers: Record<string, string>, now: number): number {
  const after = Number(headers['retry-after']);
  if (Number.isFinite(after) && after >= 0) return after * 1000;
  const reset = Number(headers['x-ratelimit-reset']);
  if (Number.isFinite(reset) && reset > 0) return Math.max(0, reset * 1000 - now);
  return 0;
}

/** GitHub and GitLab both answer errors as `{"message": …}` (GitLab's may be an object of field → messages). */
function hostMessage(json: unknown): string {
  if (typeof json !== 'object' || json === null) return '';
  const { message, error } = json as { message?: unknown; error?: unknown };
  const text = typeof message === 'string' ? message : message !== undefined ? JSON.stringify(message) : typeof error === 'string' ? error : '';
  return text === '' ? '' : `: ${text.split('\n')[0]!.slice(0, 300)}`;
}

/** A secret's clear value from this process's environment; its absence is retried (the operator may set it and restart). */
export function secretValue(secret: { name: string }, env: NodeJS.ProcessEnv, what: string): string {
  const found = env[secret.name];
  if (found === undefined || found === '') throw new HostCallError(`the ${what} reads \${env:${secret.name}}, which is not set in this process's environment`, null, { kind: 'backoff', afterMs: 0 });
  return found;
}
