/**
 * One worker slot's members, one after another, each through the one run path
 * (./run.ts). Between two members the slot makes one call to the service
 * (finishAndClaim): it writes the outcome and claims the next member. While
 * members are short (the pool's hold-ahead), that call also reserves the member
 * after the next, so that one starts the moment its predecessor ends, and the
 * write that records its start goes on beside it instead of before it: a member
 * still starts only once its claim is in the store, but the round trip is off
 * the slot's path (see runTurn).
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { startsAtClaim } from '../core/moves.js';
import type { ClaimedRun, RunOutcome } from '../core/types.js';
import { leaseOf, type FinishedAndClaimed, type NextClaim } from '../store/store.js';
import type { WorkerLink } from '../worker-link/link.js';
import type { Claim } from './claims.js';
import type { OutcomeWriter } from './outcome-writer.js';
import { Reservation } from './reservation.js';
import type { RunRequest } from './run.js';

/**
 * A slot reserves its next member only while its members are shorter than
 * this, and holds a reservation at most this long (a quarter of the lease at
 * most) while its current member runs; then it gives it back for any slot to
 * take. So a reservation keeps a member from an idle worker for no longer than this.
 */
const HOLD_AHEAD_MS = 100;

/** How long a slot of a pool whose leases last `leaseMs` holds a reservation (see HOLD_AHEAD_MS). */
export function holdAheadMs(leaseMs: number): number {
  return Math.min(HOLD_AHEAD_MS, leaseMs / 4);
}

/** Why a slot stopped: the loop's only ways out. */
export type SlotExit =
  /** Its member was stopped (shutdown, a lost lease, a cancel) or crashed: nothing written; its reservation given back. */
  | { why: 'aborted' }
  /** Shutdown began: its last outcome is written and nothing more is claimed (what was, went back). */
  | { why: 'stopping' }
  /** Its last write claimed nothing: nothing waits. */
  | { why: 'idle' }
  /** A claim answered so late that its leases may have expired: given back. */
  | { why: 'late' }
  /**
   * It claimed a member it does not start itself (startsAtClaim): a batched one, which the pool runs as a
   * share of its batch, or one of a suite version, which gets a slot of its own whose run starts it.
   */
  | { why: 'batch'; claim: Claim };

export interface SlotDeps {
  link: Pick<WorkerLink, 'finishAndClaim'>;
  outcomes: OutcomeWriter;
  logger: Logger;
  workerId: string;
  leaseMs: number;
  /** A slot reserves its next member only while its members are shorter than this, and holds a reservation at most this long (holdAheadMs). */
  holdAheadMs: number;
  /** Batch keys this worker must not claim now (see WebServerGate). */
  skipBatchKeys(): string[] | undefined;
  stopping(): boolean;
  /** True (and said) when a claim asked for at `askedAt` may have outlived its lease. */
  late(askedAt: number, runs: number): boolean;
  giveBack(runs: ClaimedRun[]): Promise<void>;
  /** Keeps a promise for shutdown to wait on. */
  track(task: Promise<unknown>): void;
  /** The one run path, for a member of this slot (parallelism 1). */
  run(req: RunRequest): Promise<void>;
}

/** A slot's write between two members (finishAndClaim), and when it was asked for. */
interface Step extends FinishedAndClaimed {
  askedAt: number;
}

/** A slot's member, run: what to write, and the member reserved for the slot's next turn (taken). */
interface Turn {
  /** Undefined when nothing is to be written: the member was aborted (shutdown, lost lease, cancel) or crashed. */
  outcome: RunOutcome | undefined;
  next: { run: ClaimedRun; askedAt: number } | undefined;
  /** Tells the run path the outcome is written (or will not be): it stops keeping the lease and forgets the member. */
  done: (written: boolean) => Promise<void>;
}

export async function runSlot(first: ClaimedRun, deps: SlotDeps): Promise<SlotExit> {
  let run = first;
  /** The write that started `run` and reserved the slot's next member (settled at once when a plain claim started it). */
  let begun: Promise<Step> | undefined;
  for (;;) {
    const { outcome, next, done } = await runTurn(run, begun, deps);
    if (outcome === undefined) {
      // Shutdown gives it back; a lost lease belongs to someone else now; a crash leaves it to the reaper.
      await done(false);
      if (next) await deps.giveBack([next.run]);
      return { why: 'aborted' };
    }
    if (deps.stopping()) {
      await written(deps.outcomes.finish(run, outcome), (ok) => ok, done);
      if (next) await deps.giveBack([next.run]);
      return { why: 'stopping' };
    }
    if (next && !startsAtClaim(next.run)) {
      // A batched member, or one whose suite version is made ready first: not started here, but by its run.
      await written(deps.outcomes.finish(run, outcome), (ok) => ok, done);
      return { why: 'batch', claim: { runs: [next.run], askedAt: next.askedAt } };
    }

    const reserve = outcome.durationMs < deps.holdAheadMs ? 1 : 0;
    if (next) {
      begun = written(step(run, outcome, { limit: reserve, reserve, start: leaseOf(next.run) }, deps), (s) => s.finished, done);
      run = next.run;
      continue;
    }
    const claimed = await written(step(run, outcome, { limit: 1 + reserve, reserve }, deps), (s) => s.finished, done);
    const [started, ...reserved] = claimed.claimed;
    if (started === undefined) return { why: 'idle' };
    if (started.batchKey !== null) {
      // Claimed reserved, as batched members are: its batch runs it. What was reserved for this slot goes back.
      await deps.giveBack(reserved);
      return { why: 'batch', claim: { runs: [started], askedAt: claimed.askedAt } };
    }
    if (deps.stopping() || deps.late(claimed.askedAt, claimed.claimed.length)) {
      await deps.giveBack(claimed.claimed);
      return { why: deps.stopping() ? 'stopping' : 'late' };
    }
    run = started;
    begun = Promise.resolve({ ...claimed, started: true, claimed: reserved });
  }
}

/** A write's answer, once the run path was told whether it landed (`done`), even when the write threw. */
async function written<T>(write: Promise<T>, landed: (answer: T) => boolean, done: Turn['done']): Promise<T> {
  let ok = false;
  try {
    const answer = await write;
    ok = landed(answer);
    return answer;
  } finally {
    await done(ok);
  }
}

/**
 * One member of a slot: runs it and, when it was started from a reservation,
 * awaits the write that recorded its start (`begun`) beside it. A start the
 * store refused (the reservation was lost, say after this process was frozen)
 * stops the member. The reservation that write made is held for the slot's
 * next turn (see Reservation) and taken when this member ends.
 */
async function runTurn(run: ClaimedRun, begun: Promise<Step> | undefined, deps: SlotDeps): Promise<Turn> {
  const abort = new AbortController();
  let ended!: (outcome: RunOutcome | undefined) => void;
  const outcomeOf = new Promise<RunOutcome | undefined>((resolve) => (ended = resolve));
  let landed!: (written: boolean) => void;
  const writtenOf = new Promise<boolean>((resolve) => (landed = resolve));
  // The run path hands the outcome over, and keeps the lease until the slot has written it.
  const finish = (_: ClaimedRun, outcome: RunOutcome) => {
    ended(outcome);
    return writtenOf;
  };
  // Ended without handing an outcome over (aborted or crashed): nothing to write. The first settlement wins.
  const finished = deps.run({ runs: [run], parallelism: 1, abort, finish }).then(
    () => ended(undefined),
    (err: unknown) => {
      deps.logger.error({ err, run: run.id }, 'running a member failed unexpectedly');
      ended(undefined);
    },
  );
  let ahead: Reservation | undefined;
  if (begun) {
    const step = await begun;
    if (!step.started) abort.abort('lease lost');
    const [reserved] = step.claimed;
    if (reserved) ahead = new Reservation(reserved, step.askedAt, deps.holdAheadMs, (r) => deps.track(deps.giveBack([r])));
  }
  const outcome = await outcomeOf;
  const next = ahead?.take(deps.leaseMs);
  if (ahead?.late) deps.logger.warn({ run: ahead.runId }, 'a reservation was taken up too late to trust its lease; giving it back instead of running it');
  return {
    outcome: abort.signal.aborted ? undefined : outcome,
    next: next && ahead && { run: next, askedAt: ahead.askedAt },
    done: (ok) => {
      landed(ok);
      return finished;
    },
  };
}

/** Writes a slot's outcome, starts its reserved member and claims on, in one call (see OutcomeWriter.write). */
async function step(run: ClaimedRun, outcome: RunOutcome, claim: Omit<NextClaim, 'workerId' | 'leaseMs'>, deps: SlotDeps): Promise<Step> {
  const askedAt = performance.now();
  const next: NextClaim = { ...claim, workerId: deps.workerId, leaseMs: deps.leaseMs, skipBatchKeys: deps.skipBatchKeys() };
  // A retry claims nothing: the first try may have committed with its answer lost, and
  // claiming again would strand what it claimed (until its lease expires). A start repeats safely.
  const answer = await deps.outcomes.write(run, outcome, (retry) =>
    deps.link.finishAndClaim(leaseOf(run), outcome, run, retry ? { ...next, limit: 0, reserve: 0 } : next),
  );
  return { ...(answer ?? { finished: false, started: false, claimed: [] }), askedAt };
}
