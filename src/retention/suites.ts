/**
 * Suite version retention: a version that no set references and no name points
 * at, uploaded before the retention cut-off, goes with its archive's bytes. A
 * set keeps its version for as long as the set is kept (set retention removes
 * the set first, then its version becomes unused); a name keeps its version
 * for as long as it points at it. With retention off nothing is removed: this
 * runs only inside the set retention sweep (./sets.ts).
 */
import type { SuiteArchiveStore } from '../artifacts/blobs.js';
import type { Store } from '../store/store.js';

export interface RemovedSuites {
  /** Versions removed. */
  versions: number;
  /** Their ids, for the log. */
  ids: string[];
}

/** Removes every unused version created more than `retentionMs` before `now`, then its bytes. */
export async function removeUnusedSuites(store: Store, archives: SuiteArchiveStore, retentionMs: number, now = Date.now()): Promise<RemovedSuites> {
  const removed = await store.suites.removeUnused(new Date(now - retentionMs));
  // After the rows: bytes whose version is gone are unreachable, never a version without its bytes.
  await archives.remove(removed.map((r) => r.location));
  return { versions: removed.length, ids: removed.map((r) => r.id) };
}
