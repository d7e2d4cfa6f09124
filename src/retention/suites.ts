/**
 * Suite version retention: a version that no set references and no name points
 * at, uploaded before the retention cut-off, goes with its archive's bytes. A
 * set keeps its version for as long as the set is kept (set retention removes
 * the set first, then its version becomes unused); a name keeps its version
 * for as long as it points at it. Where the store can tell (PostgreSQL),
 * bytes an upload left without a row go too, once past an hour's grace. With
 * retention off nothing is removed: this runs only inside the set retention
 * sweep (./sets.ts).
 */
import type { SuiteArchiveStore } from '../artifacts/blobs.js';
import type { Store } from '../store/store.js';

export interface RemovedSuiteVersions {
  /** Versions removed. */
  versions: number;
  /** Their ids, for the log. */
  ids: string[];
  /** Archives' bytes that no version named (uploads that stopped before their row), where the store can tell. */
  orphans: number;
}

/** Bytes an upload is still writing have no row yet: orphans are taken only once older than this, whatever the retention. */
const ORPHAN_GRACE_MS = 60 * 60 * 1000;

/** Removes every unused version created more than `retentionMs` before `now`, then its bytes. */
export async function removeUnusedSuiteVersions(store: Store, archives: SuiteArchiveStore, retentionMs: number, now = Date.now()): Promise<RemovedSuiteVersions> {
  const removed = await store.suiteVersions.removeUnused(new Date(now - retentionMs));
  // After the rows: bytes whose version is gone are unreachable, never a version without its bytes.
  await archives.remove(removed.map((r) => r.location));
  const orphans = (await archives.sweepOrphans?.(new Date(now - Math.max(retentionMs, ORPHAN_GRACE_MS)))) ?? 0;
  return { versions: removed.length, ids: removed.map((r) => r.id), orphans };
}
