/**
 * The store's part of set retention: removing sets that ended long ago, with
 * everything keyed by them (members, artifact rows, idempotency keys, set
 * events, webhook deliveries and their attempts). Kept: keys, sessions, workers
 * and the duration history (test_durations is keyed by environment and test
 * name, never by set, so expected durations outlive the sets they came from).
 *
 * A set still WAITING or RUNNING has no `ended_at` and is never selected,
 * whatever its age. Artifact bytes are not the store's: the rows removed hand
 * back their locations for the blob store to remove (src/sets/retention.ts).
 */

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
}
