/**
 * The sets sub-store: creating a set with its members, reading sets and
 * members, the dashboard's listing, and ending a set early (cancel, fail fast).
 * A set's status, timestamps and counts are never written here by hand: every
 * member move carries them (src/core/moves.ts, src/core/states.ts).
 */
import type { NewTestRunSet, PlaywrightCase, QueuePlace, SetControl, TestRunRecord, TestRunSetRecord, TestSelection, VariableValue } from '../core/types.js';
import type { ListSetsQuery, SetPage } from './browse.js';

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

/** Members of a set one worker holds, claimed and not begun. */
export interface HeldMembers {
  workerId: string;
  members: number;
}

/** The statement of SetsStore.held, for both stores: `runs` is the members' table, `setId` the placeholder of the set's id. */
export function heldMembersSql(runs: string, setId: string): string {
  return `SELECT worker_id AS "workerId", count(*) AS members FROM ${runs}
    WHERE set_id = ${setId} AND status = 'WAITING' AND worker_id IS NOT NULL
    GROUP BY worker_id ORDER BY worker_id`;
}

/** What a set was created with, as stored: what its details show and what a rerun of it inherits (src/sets/rerun.ts). */
export interface SetAsk {
  /** What the client sent as envOverride (secret values sealed). */
  overrides: Record<string, VariableValue>;
  /** Its labels (`{}` when none). */
  labels: Record<string, string>;
  /** The suite version it runs (src/core/suites.ts); null: the server's own config. */
  suiteVersion: string | null;
  /** Its selection (src/sets/select.ts); null: every test of its environment. */
  selection: TestSelection | null;
  /** Its deadline in seconds from creation (src/core/deadlines.ts); null: none. */
  timeoutSeconds: number | null;
  /** Its concurrency group (src/sets/supersede.ts); null: none. */
  concurrencyGroup: string | null;
}

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
  /** The Playwright case (file and line) of each member that runs one, by member id: where a failure is annotated (src/webhooks/code-hosts/). */
  playwrightCases(setId: string): Promise<Map<string, PlaywrightCase>>;

  // ── the dashboard's reads ──
  /** Sets newest first (createdAt, then id), filtered, one page at a time. */
  list(query: ListSetsQuery): Promise<SetPage>;
  /** What a set was asked for (its details page, a rerun, a code host's commit label); undefined when there is no such set. */
  asked(id: string): Promise<SetAsk | undefined>;

  /**
   * The set's members a worker has claimed and not begun (leased, still
   * WAITING), by worker: what it is preparing (the suite version and its
   * dependencies, the test process and its webServer) before they start.
   */
  held(setId: string): Promise<HeldMembers[]>;

  // ── queues (src/store/queue.ts) ──
  /**
   * Where the set stands in its environment's queue; null when it is not
   * queued (no limit, among the first maxConcurrentSets, ended, or no such set).
   */
  queuePlace(setId: string): Promise<QueuePlace | null>;

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
