import type { FastifyReply } from 'fastify';
import { RunsetError } from '../core/errors.js';

/**
 * A sliding-window limit per key (sets created per minute), kept in memory: a
 * guard against a runaway pipeline, not a billing meter, so per-process is enough.
 */
export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Records a hit and returns 0, or returns the ms to wait when over the limit. */
  take(key: string, now = Date.now()): number {
    const recent = (this.hits.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (recent.length >= this.limit) {
      this.hits.set(key, recent);
      return recent[0]! + this.windowMs - now;
    }
    recent.push(now);
    this.hits.set(key, recent);
    return 0;
  }
}

/**
 * The one sets-per-key-per-minute budget, shared by every route that creates a
 * set (create and "run again"), so no route is a way around another's limit.
 */
export class SetCreationLimit {
  private readonly window: RateLimiter;

  constructor(readonly perMinute: number) {
    this.window = new RateLimiter(perMinute, 60_000);
  }

  /** Counts a creation for the key, or answers 429 with Retry-After when over budget. */
  take(keyId: string | null, reply: FastifyReply): void {
    const wait = this.window.take(keyId ?? 'anonymous');
    if (wait <= 0) return;
    const seconds = Math.ceil(wait / 1000);
    reply.header('Retry-After', String(seconds));
    throw new RunsetError('rate_limited', `this key may create ${this.perMinute} sets per minute; retry in ${seconds}s`);
  }
}
