/**
 * The Store: everything runset keeps, behind one narrow interface with two
 * implementations (SQLite embedded, PostgreSQL for many machines) that pass one
 * shared contract suite (test/store/contract.ts). Backend differences stay inside
 * the backend; callers never branch on which one they hold.
 *
 * Invariants every implementation keeps:
 * - a set and its members are created in one transaction;
 * - each member move updates the set's status, timestamps and counts in the same
 *   transaction, so `getSet` is one primary-key read;
 * - every worker write is fenced by (workerId, claim): a stale worker changes nothing;
 * - lease expiry is judged by the store's clock, never a worker's.
 */
import type {
  ApiKeyRecord,
  ArtifactRecord,
  ClaimedRun,
  DurationSample,
  KeyRole,
  NewTestRunSet,
  RunOutcome,
  SetControl,
  TestRunRecord,
  TestRunSetRecord,
  VariableValue,
} from '../core/types.js';
import type { ListSetsQuery, NewSession, SessionRecord, SetPage } from './browse.js';
import type { ArtifactBlobStore } from '../artifacts/blobs.js';
import type { WebhookOutbox } from './webhook-outbox.js';
import type { TestHistoryStore } from './history.js';
import type { SetRetention } from './retention.js';

/** The code a store error carries when the store is out of reach for a while (PostgreSQL restarting): worth retrying. */
export const STORE_UNAVAILABLE = 'STORE_UNAVAILABLE';

/** A store error that is known to pass: the one kind of failure callers retry. */
export function isStoreUnavailable(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === STORE_UNAVAILABLE;
}

/** How many of a test's latest successful durations its history keeps (its expected duration is their median). */
export const DURATION_SAMPLES = 10;

/** The error of a member whose workers kept disappearing. */
export const WORKER_LOST = 'worker lost: its lease expired and it ran out of attempts';

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

/** What a worker slot asks for between two members (Store.finishAndClaim). */
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
}

/** The lease a claim handed out: what fences every later write about the member. */
export function leaseOf(run: ClaimedRun): LeaseRef {
  return { runId: run.id, workerId: run.workerId, claim: run.claim };
}

/** A worker process, as it registers itself. */
export interface NewWorker {
  id: string;
  host: string;
  pid: number;
  slots: number;
}

/** A live worker as a share of a batch sees it: where it runs, its slots, and the batch's members it holds (how many, their expected ms). */
export interface BatchWorker {
  id: string;
  host: string;
  slots: number;
  holding: number;
  heldMs: number;
}

/** Who cancels a set, and the error its unfinished members end with. */
export interface CancelRequest {
  byKeyId: string | null;
  byKeyName: string | null;
  error: string;
}

/** found: the set exists; cancelled: this call ended it (false: it had already ended). */
export type CancelResult = { found: false } | { found: true; cancelled: boolean };

/** A live worker process and what it does now (GET /api/v0/workers, `runset workers`). */
export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
  slots: number;
  startedAt: string;
  heartbeatAt: string;
  /** Members it has begun and not yet ended, oldest start first. */
  running: RunningMember[];
  /** Members leased to it that it has not begun: the rest of its share, a slot's next. */
  held: number;
}

export interface RunningMember {
  setId: string;
  runId: string;
  name: string;
  type: string;
  startedAt: string | null;
}

export interface NewApiKey {
  id: string;
  name: string;
  /** SHA-256 of the token, hex. The token itself is never stored. */
  hash: string;
  /** Default admin, every environment, no expiry: what keys were before they had scopes. */
  role?: KeyRole;
  envs?: readonly string[] | null;
  expiresAt?: string | null;
}

/** An Idempotency-Key on create, scoped to the API key that sent it. */
export interface IdempotencyClaim {
  keyId: string;
  key: string;
  /** SHA-256 of the canonical request body. */
  bodyHash: string;
  /** How long the key is remembered. */
  ttlMs: number;
}

export interface CreatedOnce {
  setId: string;
  /** The body hash stored with the key: differs from the claim's when the key was reused with another body. */
  bodyHash: string;
  /** False when an earlier set was returned. */
  created: boolean;
}

export interface FinishedAndClaimed {
  /** False when the finished member's lease was not ours: its outcome was not written (as finishRun, a repeat is true). */
  finished: boolean;
  /** True when `start` was asked for and its lease is ours: it is RUNNING. */
  started: boolean;
  /** What the claim took, as claimRuns returns it. */
  claimed: ClaimedRun[];
}

/** Store-wide figures a metrics scrape reads, each from an index or the sets' own counts (Store.queueStats). */
export interface QueueStats {
  /** Members WAITING in unfinished sets, as their sets count them (reserved ones included). */
  waitingMembers: number;
  /** Webhook deliveries not yet delivered nor given up. */
  pendingDeliveries: number;
  /** Worker processes that heartbeat within the staleness window. */
  liveWorkers: number;
}

export interface ReapResult {
  /** Members put back to WAITING for another claim. */
  requeued: number;
  /** Members ended FAIL because they exhausted their claims. */
  failed: number;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';

  /** Applies pending numbered migrations. Safe to call on every start. */
  migrate(): Promise<void>;
  close(): Promise<void>;

  // ── keys ──
  createKey(key: NewApiKey): Promise<ApiKeyRecord>;
  /**
   * Creates the key only when the store holds no key at all, revoked and expired
   * ones included (`serve`'s first admin key); undefined when it holds one. Of
   * processes calling it at once, one creates it.
   */
  createFirstKey(key: NewApiKey): Promise<ApiKeyRecord | undefined>;
  listKeys(): Promise<ApiKeyRecord[]>;
  /** Returns false when no such key exists. Revoking twice is not an error. */
  revokeKey(id: string): Promise<boolean>;
  /** The live (non-revoked) key with this hash. */
  findActiveKeyByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  touchKeys(ids: string[]): Promise<void>;

  // ── sets and members ──
  createSet(set: NewTestRunSet): Promise<void>;
  /**
   * Creates the set unless the same (keyId, key) was used within its ttl, in which
   * case nothing is created and the earlier set id comes back. Race-free: of two
   * concurrent calls with one key, exactly one creates.
   */
  createSetOnce(set: NewTestRunSet, idempotency: IdempotencyClaim): Promise<CreatedOnce>;
  /**
   * The set an Idempotency-Key of this API key created within its ttl, with the
   * body hash it was created with: a replay is answered from this alone.
   */
  findCreatedOnce(keyId: string, key: string): Promise<{ setId: string; bodyHash: string } | undefined>;
  getSet(id: string): Promise<TestRunSetRecord | undefined>;
  /**
   * The set, when the store can answer without waiting (the embedded store keeps
   * a copy of the set rows it serves); undefined means "ask getSet", never "no
   * such set". Lets the status GET answer with no await at all.
   */
  peekSet?(id: string): TestRunSetRecord | undefined;
  /** Several sets in one read, each once; ids that name no set are skipped. What a process watching sets for its waiting clients reads each tick. */
  getSets(ids: readonly string[]): Promise<TestRunSetRecord[]>;
  /**
   * Calls `listener` with a set's id after each write that changes the set's
   * status or counts, once that write can be read; returns the unsubscribe
   * function. Offered by a store that sees every write in this process (the
   * embedded one); absent where writes come from other processes.
   */
  onSetChanged?(listener: (setId: string) => void): () => void;
  listRuns(setId: string): Promise<TestRunRecord[]>;

  // ── dashboard: browsing sets, browser sessions ──
  /** Sets newest first (createdAt, then id), filtered, one page at a time. */
  listSets(query: ListSetsQuery): Promise<SetPage>;
  /** What the client sent as envOverride (secret values sealed), or undefined for no such set. */
  getSetOverrides(id: string): Promise<Record<string, VariableValue> | undefined>;
  /** The labels a set was created with (`{}` when none); undefined when there is no such set. */
  getSetLabels(id: string): Promise<Record<string, string> | undefined>;
  /** Stores a session (and drops expired ones); expiry is judged by the store's clock. */
  createSession(session: NewSession): Promise<SessionRecord>;
  /** A live session whose key is not revoked, or undefined. */
  findSession(idHash: string): Promise<SessionRecord | undefined>;
  deleteSession(idHash: string): Promise<void>;

  // ── scheduling ──
  // A lease covers RUNNING members and *reserved* ones: members with a batch key,
  // and a worker slot's next member (ClaimRequest.reserve), are claimed leased
  // but still WAITING in the counts, until `startRun` or `finishAndClaim` starts them.
  /**
   * Atomically leases up to `limit` unleased WAITING members (oldest sets first):
   * RUNNING, or reserved when the member has a batch key or is one of the last
   * `reserve` claimed.
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

  // ── cancel and fail fast ──
  /**
   * Ends a set early, in one transaction: every member still WAITING or RUNNING
   * (leased or not) ends FAIL with `req.error`, the set ends FAIL, and who did it
   * is recorded. Workers running its members are told (onSetCancelled) and stop
   * them; their later writes are fenced out. An ended set is left as it is.
   */
  cancelSet(setId: string, req: CancelRequest): Promise<CancelResult>;
  /** The set's fail-fast limit and its cancellation, if any; null when there is no such set. */
  setControl(setId: string): Promise<SetControl | null>;
  /** Subscribes to cancellations made by any process; returns the unsubscribe function. */
  onSetCancelled(listener: (setId: string) => void): () => void;

  // ── workers registry: who is alive, for sizing shares ──
  /** Records a worker process as alive now (again, if it was dropped). */
  registerWorker(worker: NewWorker): Promise<void>;
  /** Marks it alive now; false when its row is gone (it was dropped as stale): register again. */
  heartbeatWorker(id: string): Promise<boolean>;
  removeWorker(id: string): Promise<void>;
  /**
   * The workers that heartbeat within `staleMs` (judged by the store's clock),
   * each with how many members of one batch it holds; stale rows are dropped.
   */
  batchWorkers(setId: string, batchKey: string, staleMs: number): Promise<BatchWorker[]>;
  /** The workers that heartbeat within `staleMs`, by host then start, with the members each holds. Reads only. */
  listWorkers(staleMs: number): Promise<WorkerInfo[]>;
  /** What a metrics scrape shows of the whole store: the queue, the webhook backlog, live workers (within `staleMs`). Reads only. */
  queueStats(staleMs: number): Promise<QueueStats>;

  // ── duration history: what expected durations, claim order and shares come from ──
  /** Appends successful durations to each test's history (newest last), keeping the last DURATION_SAMPLES per test and environment. */
  recordDurations(samples: readonly DurationSample[]): Promise<void>;
  /** Every test's kept durations in one environment, oldest first, by test name. */
  durationHistory(env: string): Promise<Map<string, number[]>>;
  /**
   * Expected durations (ms) of a batch's members that nobody holds yet, in claim
   * order (longest expected first), at most `limit`: what a worker's share of it is cut from.
   */
  waitingWork(setId: string, batchKey: string, limit: number): Promise<number[]>;

  // ── artifacts: metadata (the bytes live in an ArtifactBlobStore, src/artifacts/) ──
  /** Every artifact of a set's members. */
  listArtifacts(setId: string): Promise<ArtifactRecord[]>;
  getArtifact(id: string): Promise<ArtifactRecord | undefined>;
  /** Deletes up to `limit` of the oldest artifacts created before `before` (ISO time) and returns them, for their bytes to go too. */
  deleteArtifactsBefore(before: string, limit: number): Promise<ArtifactRecord[]>;

  /**
   * Where this store keeps artifact bytes itself, when it does (PostgreSQL: every
   * API process can serve what any worker wrote); without it they go to files.
   */
  artifactBlobs?(): ArtifactBlobStore;

  /** Webhooks: set events written with the change that made them, and their deliveries. */
  readonly webhooks: WebhookOutbox;

  /** Test history: each test's ended runs in an environment (GET /api/v0/tests…). */
  readonly history: TestHistoryStore;
  /** Removing sets that ended long ago, with everything keyed by them (src/store/retention.ts). */
  readonly retention: SetRetention;

  // ── wake-ups ──
  /** Tells workers (in any process) that runs are waiting. */
  notifyRunsWaiting(): Promise<void>;
  /** Subscribes to wake-ups; returns the unsubscribe function. */
  onRunsWaiting(listener: () => void): () => void;
}
