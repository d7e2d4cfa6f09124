/**
 * The Store: everything runset keeps, behind narrow sub-stores by caller, with
 * two implementations (SQLite embedded, PostgreSQL for many machines) that pass
 * one shared contract suite (test/store/contract.ts). Backend differences stay
 * inside the backend; callers never branch on which one they hold. Each
 * sub-store's interface is a file of this folder, implemented by the file of the
 * same name in sqlite/ and in postgres/: a feature touches one pair of files.
 *
 * Invariants every implementation keeps:
 * - a set and its members are created in one transaction;
 * - each member move updates the set's status, timestamps and counts in the same
 *   transaction, so `sets.get` is one primary-key read;
 * - every worker write is fenced by (workerId, claim): a stale worker changes nothing;
 * - lease expiry is judged by the store's clock, never a worker's.
 */
import type { SetsStore } from './sets.js';
import type { SetViewsStore } from './set-views.js';
import type { KeysStore } from './keys.js';
import type { ClaimsStore } from './claims.js';
import type { WorkersStore } from './workers.js';
import type { DurationsStore } from './durations.js';
import type { ArtifactsStore } from './artifacts.js';
import type { WebhookOutbox } from './webhook-outbox.js';
import type { TestHistoryStore } from './history.js';
import type { SetRetention } from './retention.js';
import type { SuiteVersionsStore } from './suite-versions.js';
import type { QuarantineStore } from './quarantine.js';

// The sub-stores' shapes, for callers that import them with the Store.
export * from './sets.js';
export * from './set-views.js';
export * from './keys.js';
export * from './claims.js';
export * from './workers.js';
export * from './durations.js';
export type { ArtifactsStore } from './artifacts.js';
export type { NewSuiteVersion, SuiteVersionsStore } from './suite-versions.js';

/** The code a store error carries when the store is out of reach for a while (PostgreSQL restarting): worth retrying. */
export const STORE_UNAVAILABLE = 'STORE_UNAVAILABLE';

/** A store error that is known to pass: the one kind of failure callers retry. */
export function isStoreUnavailable(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === STORE_UNAVAILABLE;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';

  /** Applies pending numbered migrations. Safe to call on every start. */
  migrate(): Promise<void>;
  close(): Promise<void>;

  /** Sets and their members: create, read, cancel (the API, fail fast, deadlines, supersede). */
  readonly sets: SetsStore;
  /** What people read about a set: the dashboard's list, what it was asked for, its queue place, its held members, its Playwright cases. */
  readonly setViews: SetViewsStore;
  /** API keys and dashboard sessions (src/auth/). */
  readonly keys: KeysStore;
  /** What workers do to members under leases, and the wake-ups they hear (src/worker-link/). */
  readonly claims: ClaimsStore;
  /** The registry of live worker processes, and the queue figures a metrics scrape reads. */
  readonly workers: WorkersStore;
  /** Each test's recent successful durations: expected durations, claim order, shares. */
  readonly durations: DurationsStore;
  /** Artifact metadata, and artifact bytes where the store keeps them. */
  readonly artifacts: ArtifactsStore;
  /** Webhooks: set events written with the change that made them, and their deliveries. */
  readonly webhooks: WebhookOutbox;
  /** Test history: each test's ended runs in an environment (GET /api/v0/tests…). */
  readonly history: TestHistoryStore;
  /** Removing sets that ended long ago, with everything keyed by them (src/store/retention.ts). */
  readonly retention: SetRetention;
  /** Suite versions (src/core/suites.ts): their metadata and planned tests, names, and which are unused. */
  readonly suiteVersions: SuiteVersionsStore;
  /** Quarantined tests per environment (src/store/quarantine.ts): read when a set is planned. */
  readonly quarantine: QuarantineStore;
}
