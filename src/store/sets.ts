/**
 * The sets sub-store: creating a set with its members, reading sets and
 * members as the moves keep them, and ending a set early (cancel, fail fast,
 * deadlines, supersede). What people read about a set (the dashboard's list,
 * what it was asked for, its queue place…) is the set views' (./set-views.ts).
 * A set's status, timestamps and counts are never written here by hand: every
 * member move carries them (src/core/moves.ts, src/core/states.ts).
 */
import type { NewTestRunSet, SetControl, TestRunRecord, TestRunSetRecord } from '../core/types.js';

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

/** Who cancels a set, and the error its unfinished members end with. */
export interface CancelRequest {
  byKeyId: string | null;
  byKeyName: string | null;
  error: string;
}

/** found: the set exists; cancelled: this call ended it (false: it had already ended). */
export type CancelResult = { found: false } | { found: true; cancelled: boolean };

export interface SetsStore {
  create(set: NewTestRunSet): Promise<void>;
  /**
   * Creates the set unless the same (keyId, key) was used within its ttl, in which
   * case nothing is created and the earlier set id comes back. Race-free: of two
   * concurrent calls with one key, exactly one creates.
   */
  createOnce(set: NewTestRunSet, idempotency: IdempotencyClaim): Promise<CreatedOnce>;
  /**
   * The set an Idempotency-Key of this API key created within its ttl, with the
   * body hash it was created with: a replay is answered from this alone.
   */
  findCreatedOnce(keyId: string, key: string): Promise<{ setId: string; bodyHash: string } | undefined>;
  get(id: string): Promise<TestRunSetRecord | undefined>;
  /**
   * The set, when the store can answer without waiting (the embedded store keeps
   * a copy of the set rows it serves); undefined means "ask get", never "no
   * such set". Lets the status GET answer with no await at all. A row it
   * returns is never changed afterwards (a write replaces it with another
   * object): the status GET keeps each row's serialised answer by the object.
   */
  peek?(id: string): TestRunSetRecord | undefined;
  /** Several sets in one read, each once; ids that name no set are skipped. What a process watching sets for its waiting clients reads each tick. */
  getMany(ids: readonly string[]): Promise<TestRunSetRecord[]>;
  /**
   * Calls `listener` with a set's id after each write that changes the set's
   * status or counts, once that write can be read; returns the unsubscribe
   * function. Offered by a store that sees every write in this process (the
   * embedded one); absent where writes come from other processes.
   */
  onChanged?(listener: (setId: string) => void): () => void;
  listRuns(setId: string): Promise<TestRunRecord[]>;

  // ── supersede (src/sets/supersede.ts) ──
  /** The unfinished sets of the set's environment and concurrency group created before it, oldest first (src/sets/supersede.ts); none when it has no group. */
  olderInGroup(setId: string): Promise<string[]>;

  // ── deadlines (src/sets/deadlines.ts) ──
  /**
   * Up to `limit` unfinished sets whose deadline has passed by the store's
   * clock, earliest deadline first, with their timeouts (for the error).
   */
  overdue(limit: number): Promise<Array<{ id: string; timeoutSeconds: number }>>;

  // ── cancel and fail fast ──
  /**
   * Ends a set early, in one transaction: every member still WAITING or RUNNING
   * (leased or not) ends FAIL with `req.error`, the set ends FAIL, and who did it
   * is recorded. Workers running its members are told (ClaimsStore.onSetCancelled)
   * and stop them; their later writes are fenced out. An ended set is left as it is.
   */
  cancel(setId: string, req: CancelRequest): Promise<CancelResult>;
  /** The set's fail-fast limit and its cancellation, if any; null when there is no such set. */
  control(setId: string): Promise<SetControl | null>;
}
