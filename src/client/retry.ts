/**
 * Retrying known transient failures with jittered exponential backoff, always
 * inside a deadline and under an AbortSignal: a retry loop that can outlive the
 * caller's patience is a hang, not resilience.
 */
import { RunsetApiError } from './errors.js';

export interface BackoffPolicy {
  /** First delay, before jitter. */
  baseMs: number;
  /** No delay grows beyond this, before jitter. */
  maxMs: number;
}

/**
 * Equal jitter: half the exponential delay is kept, the other half is random, so
 * many CI jobs failing together do not come back together, yet no retry is
 * immediate. A `Retry-After` from the server overrides the computed delay.
 */
export function backoffDelay(attempt: number, policy: BackoffPolicy, retryAfterMs: number | null, random: () => number = Math.random): number {
  if (retryAfterMs !== null) return retryAfterMs;
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(exp / 2 + (exp / 2) * random());
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The signal's reason when it is an Error (the deadline's or the caller's), else an `aborted` RunsetApiError. */
export function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason;
  const detail = typeof reason === 'string' ? `the operation was aborted: ${reason}` : 'the operation was aborted';
  return new RunsetApiError({ kind: 'aborted', status: null, code: 'aborted', title: 'Aborted', detail, retryAfterMs: null, request: null });
}

export interface RetryOptions {
  /** Epoch milliseconds after which no new attempt starts. */
  deadline: number;
  policy: BackoffPolicy;
  signal?: AbortSignal;
  /** Told about each transient failure before waiting `delayMs`. */
  onRetry?: (error: RunsetApiError, delayMs: number, attempt: number) => void;
}

/**
 * Runs `attempt` until it succeeds, fails with a final error, or the next try
 * would start after the deadline — then the last transient error is thrown, so
 * the caller can say what kept failing.
 */
export async function withRetry<T>(attempt: (n: number) => Promise<T>, options: RetryOptions): Promise<T> {
  for (let n = 0; ; n += 1) {
    try {
      return await attempt(n);
    } catch (error) {
      if (!(error instanceof RunsetApiError) || !error.transient) throw error;
      const delay = backoffDelay(n, options.policy, error.retryAfterMs);
      if (Date.now() + delay >= options.deadline) throw error;
      options.onRetry?.(error, delay, n + 1);
      await sleep(delay, options.signal);
    }
  }
}
