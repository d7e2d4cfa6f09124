/**
 * What every live-event tracker does alike: Playwright's batch
 * (./playwright/tracker.ts) and a framework share that reports live
 * (./frameworks/live.ts). runset's reporter inside the runner process appends
 * events to a file the executor follows (./event-log.ts); a tracker holds the
 * share's members by their case's key, hands each member's begin and end to
 * the scheduler (an end once), and knows whether the runner said its first
 * word within its start allowance. What the events are and how they map to
 * begins and ends is each runner's own, in its extension. No processes here:
 * it is tested with plain events and a clock.
 *
 * The start guard. runset's reporter says `ready` as the runner constructs it,
 * once its config is loaded and before any test file, hook or setup of the
 * suite runs (Playwright; Vitest, Mocha, Cucumber: `LiveReporting.readyBeforeSetup`).
 * A process that has not said even that within PROCESS_START_MS is stuck
 * starting (a config that waits on stdin or a port, an install that never
 * finishes resolving, a hung loader): it is stopped and its members fail
 * saying so (`failSilentStart`, ./share.ts), instead of staying WAITING, held,
 * until the share's deadline. Only before its first word: what comes after it
 * (a globalSetup, a webServer, collecting a big suite) may take long by right.
 */
import type { BatchExecutionContext, CaseResult } from '../core/types.js';
import { PROCESS_START_MS } from './test-process.js';

/** A member as every tracker knows it: its place in the share, begun, ended. */
export interface TrackedCase {
  readonly index: number;
  begun: boolean;
  ended: boolean;
}

export abstract class LiveTracker<Case extends TrackedCase, Event> {
  private readonly byKey = new Map<string, Case>();
  private readonly byIndex: Array<Case | undefined> = [];
  private readonly bornAt: number;
  private heardAny = false;

  protected constructor(
    private readonly ctx: Pick<BatchExecutionContext, 'onBegin' | 'onEnd'>,
    protected readonly now: () => number = Date.now,
    /** The runner's start allowance: PROCESS_START_MS, shorter in tests. */
    private readonly startMs = PROCESS_START_MS,
  ) {
    this.bornAt = now();
  }

  /** One event of the runner's reporter. */
  abstract handle(event: Event): void;

  /** Whether the runner said anything yet (its reporter's `ready`, at least). */
  get started(): boolean {
    return this.heardAny;
  }

  /** Nothing came from the runner within its start allowance: it is stuck starting (the start guard above). */
  silent(): boolean {
    return !this.heardAny && this.now() - this.bornAt > this.startMs;
  }

  /** Whether the member at `index` was ended from the stream. */
  ended(index: number): boolean {
    return this.byIndex[index]?.ended ?? false;
  }

  get unfinished(): number {
    return this.cases().filter((c) => !c.ended).length;
  }

  /** Something came from the runner: it started. */
  protected heard(): void {
    this.heardAny = true;
  }

  protected track(key: string, state: Case): void {
    this.byKey.set(key, state);
    this.byIndex[state.index] = state;
  }

  protected caseOf(key: string): Case | undefined {
    return this.byKey.get(key);
  }

  protected caseAt(index: number): Case | undefined {
    return this.byIndex[index];
  }

  protected cases(): Case[] {
    return [...this.byKey.values()];
  }

  /** The member begins (an attempt of it, where the runner tells them). */
  protected begin(state: Case, attempts: number, lane?: number): void {
    state.begun = true;
    this.ctx.onBegin(state.index, attempts, lane);
  }

  /** The member ends with `result`; callers end a member once. */
  protected settle(state: Case, result: CaseResult): void {
    state.ended = true;
    this.ctx.onEnd(state.index, result);
  }
}

/** How often a guard asks whether its runner must be stopped. */
const GUARD_POLL_MS = 250;

export interface Guard<R> {
  /** Aborted once the guard's check said why the runner must stop: what stops it. */
  readonly signal: AbortSignal;
  /** That answer, once there was one. */
  readonly reason: R | undefined;
  dispose(): void;
}

/**
 * The one poller of a running tracker: asks `check` every GUARD_POLL_MS
 * whether the runner must be stopped, until it answers (then `signal` aborts),
 * `settled` says nothing is left to judge, or the guard is disposed. The start guard below is one check; Playwright's
 * adds its hang guard and idle limit (./playwright/index.ts).
 */
export function guard<R>(check: () => R | undefined, settled: () => boolean = () => false): Guard<R> {
  const stopper = new AbortController();
  let reason: R | undefined;
  const timer = setInterval(() => {
    // Nothing left to judge (the runner spoke, for the start guard): no more asking for the rest of the run.
    if (settled()) return clearInterval(timer);
    const answer = check();
    if (answer === undefined) return;
    reason = answer;
    clearInterval(timer);
    stopper.abort(answer);
  }, GUARD_POLL_MS);
  timer.unref();
  return {
    signal: stopper.signal,
    get reason() {
      return reason;
    },
    dispose: () => clearInterval(timer),
  };
}

/** The start guard alone, for a runner with nothing else to be stopped for: 'silent' when it said nothing within its start allowance. */
export function guardStart(tracker: Pick<LiveTracker<TrackedCase, unknown>, 'silent' | 'started'>): Guard<'silent'> {
  return guard(() => (tracker.silent() ? 'silent' : undefined), () => tracker.started);
}
