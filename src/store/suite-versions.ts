/**
 * The store's part of suite versions (src/core/suites.ts): each version's
 * metadata and planned tests, the names that point at versions, and which are
 * no longer used. The archive's bytes are in a blob store (the location
 * recorded here), like artifacts.
 */
import type { SuiteVersionInfo } from '../core/suites.js';
import type { TestSpec } from '../core/types.js';
import type { SuiteArchiveStore } from '../artifacts/blobs.js';

export interface NewSuiteVersion {
  id: string;
  size: number;
  files: number;
  commit: string | null;
  /** The tests the version declares for this server, Playwright entries listed into cases; paths under VERSION_ROOT. */
  tests: readonly TestSpec[];
  /** Where its archive's bytes are (the blob store's location). */
  location: string;
}

export interface SuiteVersionsStore {
  /** Records a version; the same id again changes nothing (created: false). */
  put(version: NewSuiteVersion): Promise<{ created: boolean }>;
  get(id: string): Promise<(SuiteVersionInfo & { location: string }) | undefined>;
  /** Whether a set of one of these environments names the version: what a worker key limited to them may fetch. */
  ranIn(id: string, envs: readonly string[]): Promise<boolean>;
  /** The version's tests, as recorded at upload. */
  tests(id: string): Promise<readonly TestSpec[] | undefined>;
  /** A version's id from its id or a name; undefined when neither is known. */
  resolve(idOrName: string): Promise<string | undefined>;
  /** Points `name` at a version (moving it from another). */
  setName(name: string, id: string): Promise<void>;
  /** Every version, newest first. */
  list(): Promise<SuiteVersionInfo[]>;
  /**
   * Removes versions created before `before` that no set references and no name
   * points at; answers their archives' locations for the blob store.
   */
  removeUnused(before: Date): Promise<Array<{ id: string; location: string }>>;
  /**
   * Where this store keeps archives' bytes itself, when it does (PostgreSQL: any
   * API process serves what another stored); without it they go to files under
   * `<data dir>/suites/` (src/main.ts suiteArchivesFor).
   */
  archives?(maxBytes?: number): SuiteArchiveStore;
}
