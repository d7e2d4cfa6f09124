/**
 * The clients of one API process that wait for a set's status to change
 * (`GET …/test-run-sets/{id}` with `If-None-Match` and `Prefer: wait=N`).
 *
 * How a change is heard: the embedded store tells of every set it moves
 * (SetsStore.onChanged), so a waiter is answered as soon as the write returns.
 * PostgreSQL's writes come from worker processes anywhere, so the sets that
 * have waiters are read together, in one statement, every `pollMs` while any
 * client waits: a cost of one indexed read per tick per API process, however
 * many clients wait, and none on the workers' claim path (a NOTIFY per member
 * move would be paid by every set, watched or not).
 */
import type { TestRunSetRecord } from '../core/types.js';
import type { Store } from '../store/store.js';
import { statusEtag } from './conditional.js';

interface Waiter {
  etag: string;
  done: (set: TestRunSetRecord | undefined) => void;
}

export interface StatusWatchOptions {
  /** How often the watched sets are read when the store has no change feed. */
  pollMs: number;
  /** Past this many waiting clients, a new one is answered at once (it then polls as it would without waits). */
  maxWaiters: number;
  onError: (err: unknown) => void;
}

export const DEFAULT_STATUS_WATCH = Object.freeze({ pollMs: 50, maxWaiters: 10_000 });
/** With a change feed, the watched sets are still read this often, in case a change is missed. */
const FEED_SAFETY_POLL_MS = 1_000;

export class StatusWatch {
  private readonly waiting = new Map<string, Set<Waiter>>();
  private size = 0;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
  private readonly unsubscribe: (() => void) | undefined;
  private readonly pollMs: number;

  constructor(
    private readonly store: Store,
    private readonly opts: StatusWatchOptions,
  ) {
    this.unsubscribe = store.sets.onChanged?.((id) => {
      if (this.waiting.has(id)) void this.check([id]);
    });
    this.pollMs = this.unsubscribe ? FEED_SAFETY_POLL_MS : opts.pollMs;
  }

  /** Whether one more client may wait now. */
  get hasRoom(): boolean {
    return this.size < this.opts.maxWaiters;
  }

  /**
   * Resolves with the set once its tag is no longer `etag`, or with undefined
   * after `ms`, when `signal` aborts (the client went away) or at close().
   */
  wait(setId: string, etag: string, ms: number, signal: AbortSignal): Promise<TestRunSetRecord | undefined> {
    return new Promise((resolve) => {
      let waiters = this.waiting.get(setId);
      if (!waiters) this.waiting.set(setId, (waiters = new Set()));
      const timer = setTimeout(() => waiter.done(undefined), ms);
      const onAbort = () => waiter.done(undefined);
      const waiter: Waiter = {
        etag,
        done: (set) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          if (waiters.delete(waiter)) this.size--;
          if (waiters.size === 0 && this.waiting.get(setId) === waiters) this.waiting.delete(setId);
          if (this.size === 0) this.stopPolling();
          resolve(set);
        },
      };
      waiters.add(waiter);
      this.size++;
      signal.addEventListener('abort', onAbort, { once: true });
      this.startPolling();
      // A change between the caller's read and now is found by the first check.
      void this.check([setId]);
    });
  }

  /** Answers every waiting client now (each gets 304): the server is closing. */
  close(): void {
    this.unsubscribe?.();
    for (const waiters of [...this.waiting.values()]) for (const waiter of [...waiters]) waiter.done(undefined);
    this.stopPolling();
  }

  private startPolling(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (!this.reading) void this.check([...this.waiting.keys()]);
    }, this.pollMs);
    this.timer.unref();
  }

  private stopPolling(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async check(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    this.reading = true;
    try {
      for (const set of await this.store.sets.getMany(ids)) {
        const tag = statusEtag(set);
        for (const waiter of [...(this.waiting.get(set.id) ?? [])]) if (waiter.etag !== tag) waiter.done(set);
      }
    } catch (err) {
      // The store is out of reach for a moment: the waiters wait on, and the next tick reads again.
      this.opts.onError(err);
    } finally {
      this.reading = false;
    }
  }
}
