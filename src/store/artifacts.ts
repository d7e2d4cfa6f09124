/**
 * The artifacts sub-store: artifact metadata (written with the outcome that
 * carries it: ClaimsStore.finishRun), and the bytes where the store keeps them
 * itself. Elsewhere the bytes live in an ArtifactBlobStore of files (src/artifacts/).
 */
import type { ArtifactRecord } from '../core/types.js';
import type { ArtifactBlobStore } from '../artifacts/blobs.js';

export interface ArtifactsStore {
  /** Every artifact of a set's members. */
  list(setId: string): Promise<ArtifactRecord[]>;
  get(id: string): Promise<ArtifactRecord | undefined>;
  /** Deletes up to `limit` of the oldest artifacts created before `before` (ISO time) and returns them, for their bytes to go too. */
  deleteBefore(before: string, limit: number): Promise<ArtifactRecord[]>;
  /**
   * Where this store keeps artifact bytes itself, when it does (PostgreSQL: every
   * API process can serve what any worker wrote); without it they go to files.
   */
  blobs?(maxBytes?: number): ArtifactBlobStore;
}
