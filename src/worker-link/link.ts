/**
 * The worker protocol: everything a worker process needs of the service, and
 * nothing more. The scheduler (src/scheduler/) sees the service only through a
 * WorkerLink, so the same pool runs
 * - in a process that holds the store (`storeLink`, src/worker-link/store-link.ts:
 *   `serve` with workers, direct PostgreSQL workers), and
 * - in a process that holds no database and no secret key, over HTTP (the
 *   worker protocol routes of the API and their client).
 *
 * Every write under a lease is fenced by (workerId, claim) exactly as the store
 * fences it: false means the lease is no longer ours and nothing was written.
 * What follows a finish on the service's side (the duration history, fail fast)
 * is the link's business, not the worker's: a worker only reports outcomes.
 */
import type { Readable } from 'node:stream';
import type { ClaimedRun, RunOutcome, TestSpec } from '../core/types.js';
import type { ArtifactSink } from '../artifacts/blobs.js';
import type {
  BatchClaimRequest,
  BatchWorker,
  ClaimRequest,
  FinishedAndClaimed,
  LeaseRef,
  NewWorker,
  NextClaim,
} from '../store/store.js';

/** What the service needs of a finished member beside its lease: its set (fail fast), environment and test name (the duration history). A ClaimedRun is one. */
export interface FinishedRunRef {
  setId: string;
  env: string;
  spec: Pick<TestSpec, 'name'>;
}

export interface WorkerLink {
  // ── the workers registry ──
  /** Records this worker process as alive now (again, if it was dropped). */
  registerWorker(worker: NewWorker): Promise<void>;
  /** Marks it alive now; false when it was dropped as stale: register again. */
  heartbeatWorker(id: string): Promise<boolean>;
  removeWorker(id: string): Promise<void>;
  /** Every live worker, with what it holds of one batch: what a share of the batch is sized from. */
  batchWorkers(setId: string, batchKey: string): Promise<BatchWorker[]>;
  /** Expected durations (ms) of a batch's members nobody holds yet, longest first, at most `limit`. */
  waitingWork(setId: string, batchKey: string, limit: number): Promise<number[]>;

  // ── claims under leases (see Store for each move's rules) ──
  claimRuns(req: ClaimRequest): Promise<ClaimedRun[]>;
  claimBatch(req: BatchClaimRequest): Promise<ClaimedRun[]>;
  startRun(lease: LeaseRef, sinceMs?: number): Promise<boolean>;
  heartbeat(lease: LeaseRef, leaseMs: number, attempts: number): Promise<boolean>;
  /** Ends a member under its lease; the service then records its duration and applies fail fast. */
  finishRun(lease: LeaseRef, outcome: RunOutcome, run: FinishedRunRef): Promise<boolean>;
  finishAndClaim(lease: LeaseRef, outcome: RunOutcome, run: FinishedRunRef, next: NextClaim): Promise<FinishedAndClaimed>;
  releaseRuns(leases: LeaseRef[]): Promise<number>;

  // ── what the service tells a worker ──
  /** Calls `listener` when members may be waiting; returns the unsubscribe function. */
  onRunsWaiting(listener: () => void): () => void;
  /** Calls `listener` with a set's id when it is cancelled; returns the unsubscribe function. */
  onSetCancelled(listener: (setId: string) => void): () => void;

  /** Where artifact bytes go. */
  readonly artifacts: ArtifactSink;

  // ── suite versions ──
  /**
   * A suite version's archive (src/core/suites.ts: a gzipped tar), streamed as
   * stored; the caller checks its hash against `id`. Rejects with
   * SuiteArchiveGoneError when the service knows no such version or its bytes
   * are gone. `signal` stops a fetch under way (the member was cancelled).
   */
  suiteArchive(id: string, signal?: AbortSignal): Promise<Readable>;
}
