/**
 * When a failed delivery is tried again: exponential backoff with jitter, for
 * 24 hours from the delivery's creation, then it is given up (state `failed`).
 */
export interface RetryPolicy {
  /** The delay after the first failed attempt; each later one doubles it. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** How long after its creation a delivery is still tried. */
  windowMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = Object.freeze({ firstDelayMs: 10_000, maxDelayMs: 60 * 60_000, windowMs: 24 * 60 * 60_000 });

/**
 * The wait before the next attempt after `attemptsMade` failed ones, for a
 * delivery `ageMs` old; null once the window is over. The last attempt falls
 * at the window's end. Jitter (±20 %) keeps deliveries to a receiver that came
 * back from arriving all at once.
 */
export function nextRetryMs(policy: RetryPolicy, attemptsMade: number, ageMs: number, random: () => number = Math.random): number | null {
  if (ageMs >= policy.windowMs) return null;
  const backoff = Math.min(policy.firstDelayMs * 2 ** Math.min(attemptsMade - 1, 30), policy.maxDelayMs);
  const delay = Math.round(backoff * (0.8 + 0.4 * random()));
  return Math.min(delay, policy.windowMs - ageMs);
}
