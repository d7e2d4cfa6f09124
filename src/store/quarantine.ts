/**
 * The store's part of quarantine: which tests of an environment are
 * quarantined, until when, why and by whom. A set reads the names quarantined
 * when it is planned (src/sets/plan.ts), and its members carry that
 * (`quarantined`) for the status rule (failsSet, src/core/moves.ts). An entry
 * ends by itself at `until`: every read leaves expired entries out.
 */

/** A quarantine entry as stored and read. */
export interface QuarantineEntry {
  env: string;
  /** The test's name, as members show it. */
  name: string;
  reason: string;
  /** ISO time the quarantine ends by itself. */
  until: string;
  createdAt: string;
  /** The key that added it (null: the key is gone, or the entry came from a server-side tool). */
  createdByKeyId: string | null;
  createdByName: string | null;
}

export type NewQuarantineEntry = Omit<QuarantineEntry, 'createdAt'>;

export interface QuarantineStore {
  /**
   * Quarantines a test, or replaces the entry that quarantines it (a new
   * reason or end, recorded as added now by this key). `created` is false when
   * an entry in force was replaced.
   */
  put(entry: NewQuarantineEntry): Promise<{ created: boolean; entry: QuarantineEntry }>;
  /** Entries in force, by environment then name; `envs` null: every environment. */
  list(envs: readonly string[] | null): Promise<QuarantineEntry[]>;
  /** The names of `env`'s tests quarantined now. */
  activeNames(env: string): Promise<Set<string>>;
  /** Ends a quarantine now; false when the test was not quarantined (or its quarantine had already ended). */
  remove(env: string, name: string): Promise<boolean>;
}
