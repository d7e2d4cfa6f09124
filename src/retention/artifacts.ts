/**
 * Artifact retention: a periodic sweep removes artifacts older than the
 * retention (metadata first, then their bytes) and, where the blob store can
 * tell, bytes that no artifact row ever named (a worker died between storing a
 * trace and recording its outcome).
 */
import type { Logger } from 'pino';
import type { Store } from '../store/store.js';
import type { ArtifactBlobStore } from '../artifacts/blobs.js';

export const DEFAULT_ARTIFACT_RETENTION = '7d';

/** Deleted per round trip, so one sweep never holds a long transaction. */
const PAGE = 500;
/** Bytes younger than this may still be on their way to an outcome: never orphans yet. */
const ORPHAN_GRACE_MS = 60 * 60 * 1000;

export interface SweepResult {
  removed: number;
  orphans: number;
}

export async function sweepArtifacts(store: Store, blobs: ArtifactBlobStore, retentionMs: number, now = Date.now()): Promise<SweepResult> {
  const before = new Date(now - retentionMs).toISOString();
  let removed = 0;
  for (;;) {
    const gone = await store.artifacts.deleteBefore(before, PAGE);
    await blobs.remove(gone.map((a) => a.location));
    removed += gone.length;
    if (gone.length < PAGE) break;
  }
  const orphans = (await blobs.sweepOrphans?.(new Date(now - ORPHAN_GRACE_MS))) ?? 0;
  return { removed, orphans };
}

export interface RetentionOptions {
  store: Store;
  blobs: ArtifactBlobStore;
  retentionMs: number;
  logger: Logger;
}

/** Sweeps now and then periodically (a tenth of the retention, between 1 s and 1 h); returns the stop function. */
export function startRetentionSweep(opts: RetentionOptions): () => Promise<void> {
  const periodMs = Math.min(3_600_000, Math.max(1000, Math.floor(opts.retentionMs / 10)));
  let running: Promise<void> = Promise.resolve();
  const sweep = () => {
    running = sweepArtifacts(opts.store, opts.blobs, opts.retentionMs).then(
      (r) => {
        if (r.removed + r.orphans > 0) opts.logger.info(r, 'removed old artifacts');
      },
      (err: unknown) => opts.logger.warn({ err }, 'artifact retention sweep failed; will retry'),
    );
  };
  const first = setTimeout(sweep, 1000);
  const timer = setInterval(sweep, periodMs);
  first.unref();
  timer.unref();
  return async () => {
    clearTimeout(first);
    clearInterval(timer);
    await running;
  };
}
