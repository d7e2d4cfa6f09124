/**
 * The polling loop of seed 4.3: read the status until SUCCESS or FAIL, keep
 * polling on any other value (also ones this client does not know), retry
 * transient failures with backoff, and stop at a deadline.
 *
 * Against a server that offers it (an ETag on the status, and
 * `Preference-Applied: wait` on a conditional read), each read after the first
 * asks to be answered when the status changes, for up to LONG_POLL_SECONDS, and
 * the next is sent at once: the end is seen within moments, with fewer requests
 * than polling. Against any other server it polls every `interval`.
 */
import { formatDuration, MAX_DURATION_MS, parseDuration } from '../core/duration.js';
import { isTransient, RunsetApiError } from './errors.js';
import { abortReason, backoffDelay, sleep } from './retry.js';
import { isFinalStatus, type TestRunSetStatus } from './types.js';

export interface WaitProgress {
  /** Since the wait started. */
  elapsedMs: number;
  /** Successful polls so far, this one included. */
  polls: number;
}

export interface WaitOptions {
  /** Between polls: milliseconds or a duration string (`10s`). Default 10 s (seed 4.3). */
  interval?: number | string;
  /** Overall limit: milliseconds or a duration string (`10m`). Default 10 min (seed 4.3). */
  timeout?: number | string;
  signal?: AbortSignal;
  /** Called after every successful poll, final one included. */
  onProgress?: (status: TestRunSetStatus, progress: WaitProgress) => void;
  /** Called for each transient failure, before waiting `delayMs` to try again. */
  onRetry?: (error: RunsetApiError, delayMs: number) => void;
  /** Ask the server to answer when the status changes (default true); false: plain polling at `interval`. */
  longPoll?: boolean;
}

/** How long one read may be held by the server: under the idle limit of common proxies (60 s). */
export const LONG_POLL_SECONDS = 30;

/** One read: the status (null: unchanged since `since.etag`), its tag, and whether the server held it for a change. */
export type ReadStatus = (
  signal: AbortSignal,
  since: { etag: string; waitSeconds: number } | undefined,
) => Promise<{ status: TestRunSetStatus | null; etag: string | null; waited: boolean }>;

export const DEFAULT_INTERVAL_MS = 10_000;
export const DEFAULT_TIMEOUT_MS = 600_000;
/** Repeated failures back off from the interval up to this, never below the interval's half. */
const MAX_BACKOFF_MS = 60_000;

function toMs(value: number | string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const ms = typeof value === 'string' ? parseDuration(value) : value;
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`runset client: invalid duration ${String(value)}`);
  return Math.min(ms, MAX_DURATION_MS);
}

export function waitTimeoutError(id: string, timeoutMs: number): RunsetApiError {
  return new RunsetApiError({
    kind: 'timeout',
    status: null,
    code: 'wait_timeout',
    title: 'Timed out',
    detail: `test run set ${id} did not finish within ${formatDuration(timeoutMs)}`,
    retryAfterMs: null,
    request: null,
  });
}

export async function pollUntilFinal(read: ReadStatus, id: string, options: WaitOptions): Promise<TestRunSetStatus> {
  const intervalMs = toMs(options.interval, DEFAULT_INTERVAL_MS);
  const timeoutMs = toMs(options.timeout, DEFAULT_TIMEOUT_MS);
  const started = Date.now();
  // One signal for everything in flight: it fires at the deadline (with the
  // timeout error as reason) or when the caller aborts (with the caller's reason).
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(waitTimeoutError(id, timeoutMs)), timeoutMs);
  const onCallerAbort = () => deadline.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  if (options.signal?.aborted) onCallerAbort();
  try {
    let polls = 0;
    let failures = 0;
    let last: { status: TestRunSetStatus; etag: string | null } | undefined;
    // Once the server has held a read for a change, a changed status (even one
    // answered at once, by a server that does not say it waited) is news while
    // the set moves: the next read goes at once, never after the interval.
    let serverWaits = false;
    for (;;) {
      let delay = intervalMs;
      try {
        const waitSeconds = Math.min(LONG_POLL_SECONDS, Math.floor((started + timeoutMs - Date.now()) / 1000));
        const since = options.longPoll !== false && last?.etag && waitSeconds >= 1 ? { etag: last.etag, waitSeconds } : undefined;
        const asked = Date.now();
        const answer = await read(deadline.signal, since);
        polls += 1;
        failures = 0;
        const status = answer.status ?? last?.status;
        if (!status) throw new TypeError('runset client: "not modified" answered to a first read');
        last = { status, etag: answer.etag };
        options.onProgress?.(status, { elapsedMs: Date.now() - started, polls });
        if (isFinalStatus(status.status)) return status;
        const held = since !== undefined && heldAsAsked(answer, since.waitSeconds, Date.now() - asked);
        serverWaits ||= held;
        if (options.longPoll !== false && answer.etag !== null && (!since || held || (serverWaits && answer.status !== null))) delay = 0;
      } catch (error) {
        if (deadline.signal.aborted) throw abortReason(deadline.signal);
        if (!isTransient(error)) throw error;
        const transient = error as RunsetApiError;
        delay = backoffDelay(failures, { baseMs: intervalMs, maxMs: Math.max(intervalMs, MAX_BACKOFF_MS) }, transient.retryAfterMs);
        failures += 1;
        options.onRetry?.(transient, delay);
      }
      if (delay > 0) await sleep(delay, deadline.signal);
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onCallerAbort);
  }
}

/**
 * Whether the server held a conditional read for a change, as asked: then the
 * next read goes at once. An early "unchanged" (a server closing, or one that
 * only claims to wait) falls back to the interval, so nothing spins.
 */
function heldAsAsked(answer: { status: unknown; waited: boolean }, waitSeconds: number, tookMs: number): boolean {
  return answer.waited && (answer.status !== null || tookMs >= (waitSeconds * 1000) / 2);
}
