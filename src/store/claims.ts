/**
 * The claims sub-store: what a worker does to the members it runs. Claims,
 * starts, heartbeats and outcomes under leases, giving members back, the
 * reaper, and the wake-ups and cancel notices a worker listens to. Shaped so
 * that a worker can use it across a network (src/worker-link/): every call
 * names its lease, and none hands out a set or a key.
 */
import type { ClaimedRun, RunOutcome } from '../core/types.js';

/** The error of a member whose workers kept disappearing. */
export const WORKER_LOST = 'worker lost: its lease expired and it ran out of attempts';

/** The cases a finish writes, as JSON text; null when the outcome has none. */
export function casesOf(outcome: RunOutcome): string | null {
  return outcome.cases && outcome.cases.length > 0 ? JSON.stringify(outcome.cases) : null;
}

/** The skipped mark a finish writes: only a SUCCESS carries it, whatever a worker sent. */
export function skippedOf(outcome: RunOutcome): boolean {
  return outcome.status === 'SUCCESS' && outcome.skipped === true;
}

export interface ClaimRequest {
  workerId: string;
  limit: number;
  leaseMs: number;
  /**
   * How many of the `limit` (the last ones claimed) to reserve rather than
   * start: a worker slot's next member, held while its current one runs (see
   * WorkerPool). Default 0.
   */
  reserve?: number;
  /** Batch keys whose members this claim leaves alone (batches this host cannot start now: see WebServerGate). */
  skipBatchKeys?: readonly string[];
  /** Only members of this set (`runset worker --set ID`). */
  setId?: string;
  /** Only members of sets in these environments (a worker key limited to them). */
  envs?: readonly string[];
}

/** What a worker slot asks for between two members (ClaimsStore.finishAndClaim). */
export interface NextClaim extends ClaimRequest {
  /**
   * A member this slot reserved earlier and starts now: WAITING → RUNNING under
   * that lease, renewed for `leaseMs`. Already RUNNING under it (a retried
   * write) stays as it is.
   */
  start?: LeaseRef;
}

/** The rest of a batch: more WAITING members of one set with one batch key. */
export interface BatchClaimRequest extends ClaimRequest {
  setId: string;
  batchKey: string;
}

export interface LeaseRef {
  runId: string;
  workerId: string;
  claim: number;
  /**
   * Over HTTP only: the ticket the API signed when it answered the claim
   * (src/api/lease-tickets.ts), which every write under the lease sends back.
   * The store ignores it: a direct worker's lease is fenced by the rest.
   */
  token?: string;
}

/** The lease a claim handed out: what fences every later write about the member. */
export function leaseOf(run: ClaimedRun): LeaseRef {
  return { runId: run.id, workerId: run.workerId, claim: run.claim, ...(run.leaseToken ? { token: run.leaseToken } : {}) };
}

export interface FinishedAndClaimed {
  /** False when the finished member's lease was not ours: its outcome was not written (as finishRun, a repeat is true). */
  finished: boolean;
  /** True when `start` was asked for and its lease is ours: it is RUNNING. */
  started: boolean;
  /** What the claim took, as claimRuns returns it. */
  claimed: ClaimedRun[];
}

export interface ReapResult {
  /** Members put back to WAITING for another claim. */
  requeued: number;
  /** Members ended FAIL because they exhausted their claims. */
  failed: number;
}

// A lease covers RUNNING members and *reserved* ones: members with a batch key,
// members of a set that runs a suite version (they wait while their worker
// prepares it: startsAtClaim in src/core/moves.ts),
// and a worker slot's next member (ClaimRequest.reserve), are claimed leased
// but still WAITING in the counts, until `startRun` or `finishAndClaim` starts them.
// The moves each call may make, and what they do to the member's and the set's
// timestamps, are src/core/moves.ts's rules.
export interface ClaimsStore {
  /**
   * Atomically leases up to `limit` unleased WAITING members (oldest sets first):
   * RUNNING, or reserved when the member has a batch key, its set runs a suite
   * version, or it is one of the last `reserve` claimed.
   */
  claimRuns(req: ClaimRequest): Promise<ClaimedRun[]>;
  /** Reserves up to `limit` more unleased WAITING members of one set with one batch key, oldest first. */
  claimBatch(req: BatchClaimRequest): Promise<ClaimedRun[]>;
  /**
   * A reserved member began: WAITING → RUNNING. `sinceMs`: it began that long
   * ago by the store's clock (a member that ended before it could begin starts
   * when its worker took it); default now. False = the lease is no longer ours.
   */
  startRun(lease: LeaseRef, sinceMs?: number): Promise<boolean>;
  /** Extends the lease and records attempts so far. False = the lease is no longer ours: stop. */
  heartbeat(lease: LeaseRef, leaseMs: number, attempts: number): Promise<boolean>;
  /**
   * Ends a member (a reserved one may only FAIL: it never started), recording the
   * outcome's artifacts with it. False = the lease is no longer ours and nothing was written.
   * Idempotent: repeated with the same outcome under the same lease (a retry whose
   * first try committed but whose answer was lost), true, and nothing written again.
   */
  finishRun(lease: LeaseRef, outcome: RunOutcome): Promise<boolean>;
  /**
   * finishRun, then (when `next.start` is given) the start of a member this
   * worker reserved, then claimRuns for the same worker, atomically: how a
   * worker slot moves from one member to the next in one round trip. The claim
   * happens even when the lease was not ours (the slot is free either way); an
   * illegal finish (a reserved member's SUCCESS) throws and changes nothing.
   */
  finishAndClaim(lease: LeaseRef, outcome: RunOutcome, next: NextClaim): Promise<FinishedAndClaimed>;
  /** Gives members back (shutdown, a reservation not needed): RUNNING or reserved → WAITING, unleased, without spending a claim. */
  releaseRuns(leases: LeaseRef[]): Promise<number>;
  /**
   * Expired leases (judged by the store's clock): back to WAITING until a member
   * has lost `maxLostLeases` leases, then FAIL with WORKER_LOST.
   */
  reapExpired(maxLostLeases: number): Promise<ReapResult>;
  /**
   * Expected durations (ms) of a batch's members that nobody holds yet, in claim
   * order (longest expected first), at most `limit`: what a worker's share of it is cut from.
   */
  waitingWork(setId: string, batchKey: string, limit: number): Promise<number[]>;

  // ── wake-ups and cancel notices ──
  /** Tells workers (in any process) that runs are waiting. */
  notifyRunsWaiting(): Promise<void>;
  /** Subscribes to wake-ups; returns the unsubscribe function. */
  onRunsWaiting(listener: () => void): () => void;
  /** Subscribes to cancellations made by any process (SetsStore.cancel); returns the unsubscribe function. */
  onSetCancelled(listener: (setId: string) => void): () => void;
}
