/**
 * The store's part of set retention: removing sets that ended long ago, with
 * everything keyed by them (members, artifact rows, idempotency keys, set
 * events, webhook deliveries and their attempts). Kept: keys, sessions, workers
 * and the duration history (test_durations is keyed by environment and test
 * name, never by set, so expected durations outlive the sets they came from).
 *
 * A set still WAITING or RUNNING has no `ended_at` and is never selected,
 * whatever its age. Artifact bytes are not the store's: the rows removed hand
 * back their locations for the blob store to remove (src/retention/sets.ts).
 */

/**
 * What a `serve` given no `--retention` does on this store, recorded once by the
 * migration that added store_settings (migration 15 on both stores): `default`, the
 * default retention (DEFAULT_RETENTION in src/retention/sets.ts); `keep`, every
 * set is kept. A store made by a runset that had no retention holds history its
 * operator never agreed to lose: an upgrade must not start deleting it.
 */
export type RetentionWhenUnset = 'default' | 'keep';

/**
 * The rule, from the migrations a store had before the run that records it: a new
 * store (none) or one already swept by a runset with retention (it had the set
 * retention migration, `retentionVersion`) gets the default; a store older than
 * retention keeps every set until the operator sets a retention.
 */
export function retentionWhenUnset(found: ReadonlySet<number>, retentionVersion: number): RetentionWhenUnset {
  return found.size === 0 || found.has(retentionVersion) ? 'default' : 'keep';
}

/** The sets a removal would take now: how many and the earliest end among them (null: none). */
export interface DueSets {
  sets: number;
  oldestEndedAt: string | null;
}

/** What removing ended sets takes (or would take) away. */
export interface RemovedSummary {
  sets: number;
  members: number;
  artifacts: number;
  /** Sum of the removed artifacts' sizes. */
  artifactBytes: number;
}

export interface RemovedBatch extends RemovedSummary {
  /** Where the removed artifacts' bytes are, for the blob store to remove once this commits. */
  artifactLocations: string[];
  /** The latest end among the removed sets (null: none removed): where the next batch may start. */
  lastEndedAt: string | null;
}

export interface SetRetention {
  /**
   * Removes up to `limit` sets that ended before `before` (ISO time), oldest end
   * first, with everything keyed by them, in one transaction. Safe to run in
   * several processes at once: each batch takes sets no other running batch holds.
   * `from` (a batch's lastEndedAt) starts the search at that end time: on
   * PostgreSQL the rows earlier batches removed stay in the index until vacuumed,
   * and a search from the start would walk them all again, batch after batch.
   */
  removeEndedBefore(before: string, limit: number, from?: string | null): Promise<RemovedBatch>;
  /** What removing every set that ended before `before` would take away; removes nothing. */
  countEndedBefore(before: string): Promise<RemovedSummary>;
  /** How many sets ended before `before`, and the earliest end: the ended-time index alone, for the sweep to say what it is about to remove. */
  dueBefore(before: string): Promise<DueSets>;
  /** What a serve given no retention does on this store (see RetentionWhenUnset). */
  whenUnset(): Promise<RetentionWhenUnset>;
}
