import type { FastifyReply } from 'fastify';
import { RunsetError } from '../core/errors.js';

/**
 * A sliding-window limit per key (sets created per minute, sign-ins per
 * address), kept in memory: a guard against a runaway pipeline or a guessing
 * client, not a billing meter, so per-process is enough.
 */
export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    /** Past this many tracked keys, those with no recent hit are dropped (many addresses must not grow memory for ever). */
    private readonly maxTracked = 10_000,
  ) {}

  /** Records a hit and returns 0, or returns the ms to wait when over the limit. */
  take(key: string, now = Date.now()): number {
    if (this.hits.size > this.maxTracked) this.prune(now);
    const recent = (this.hits.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (recent.length >= this.limit) {
      this.hits.set(key, recent);
      return recent[0]! + this.windowMs - now;
    }
    recent.push(now);
    this.hits.set(key, recent);
    return 0;
  }

  private prune(now: number): void {
    for (const [key, times] of this.hits) if (times[times.length - 1]! <= now - this.windowMs) this.hits.delete(key);
  }
}

/** A per-minute budget per caller that answers 429 with Retry-After, saying the limit, when spent. */
class PerMinuteLimit {
  private readonly window: RateLimiter;

  constructor(
    readonly perMinute: number,
    private readonly refusal: (perMinute: number, seconds: number) => string,
  ) {
    this.window = new RateLimiter(perMinute, 60_000);
  }

  protected spend(caller: string, reply: FastifyReply): void {
    const wait = this.window.take(caller);
    if (wait <= 0) return;
    const seconds = Math.ceil(wait / 1000);
    reply.header('Retry-After', String(seconds));
    throw new RunsetError('rate_limited', this.refusal(this.perMinute, seconds));
  }
}

/**
 * The one sets-per-key-per-minute budget, shared by every route that creates a
 * set (create and "run again"), so no route is a way around another's limit.
 */
export class SetCreationLimit extends PerMinuteLimit {
  constructor(perMinute: number) {
    super(perMinute, (n, s) => `this key may create ${n} sets per minute; retry in ${s}s`);
  }

  /** Counts a creation for the key, or answers 429 with Retry-After when over budget. */
  take(keyId: string | null, reply: FastifyReply): void {
    this.spend(keyId ?? 'anonymous', reply);
  }
}

/**
 * Sign-in attempts per client address (POST /api/v0/session), every attempt
 * counted: keys cannot be guessed, but a client trying keys by the thousand is
 * slowed and shows up in the log. Behind a proxy every client shares its address.
 */
export class SignInLimit extends PerMinuteLimit {
  constructor(perMinute: number) {
    super(perMinute, (n, s) => `at most ${n} sign-in attempts per minute from one address; retry in ${s}s`);
  }

  take(address: string, reply: FastifyReply): void {
    this.spend(address, reply);
  }
}
