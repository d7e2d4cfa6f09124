/**
 * Where artifact bytes live. Metadata (name, type, size, which member) is in the
 * Store, recorded with the member's outcome under its lease; the bytes go first,
 * to a blob store, which hands back a `location` to record.
 *
 * - FileBlobStore: files under `<data dir>/artifacts/`, the embedded default.
 * - PostgresBlobStore (src/store/postgres/blobs.ts): chunks in the database, so
 *   that an artifact a worker on one machine wrote is served by an API process
 *   on another.
 *
 * Suite archives (src/core/suites.ts) are kept by the same two classes, in
 * places of their own (`<data dir>/suites/`, the suite_chunks table): the
 * artifact orphan sweep never sees them.
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, rename, stat, unlink } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** Largest artifact kept by default: a long test's trace or video can be big, a runaway one bigger. */
export const DEFAULT_MAX_ARTIFACT_BYTES = 100 * 1024 * 1024;

/** Bytes kept under an id, wherever they live. */
export interface BlobStore {
  /** Largest blob this store keeps, in bytes. */
  readonly maxBytes: number;
  /** Copies a file's bytes in under `id`; throws BlobTooLargeError past maxBytes. */
  put(id: string, file: string): Promise<{ location: string; size: number }>;
  /** The bytes at a location, or undefined when they are gone. */
  open(location: string): Promise<Readable | undefined>;
  /** Removes bytes; ones already gone are fine. */
  remove(locations: readonly string[]): Promise<void>;
}

export interface ArtifactBlobStore extends BlobStore {
  /** Removes bytes written before `before` that no artifact row names (a worker died in between). */
  sweepOrphans?(before: Date): Promise<number>;
}

/**
 * Where suite versions' archives are (src/core/suites.ts), apart from artifacts'
 * bytes: the artifact orphan sweep never reaches them, and only the retention
 * sweep removes them, with their version (src/retention/suites.ts).
 */
export interface SuiteArchiveStore extends BlobStore {
  /** Removes bytes stored before `before` that no version names (an upload that stopped between its bytes and its row). */
  sweepOrphans?(before: Date): Promise<number>;
}

/** What a worker needs of a blob store: hand bytes over, and take back those whose outcome could not be recorded. */
export type ArtifactSink = Pick<ArtifactBlobStore, 'maxBytes' | 'put' | 'remove'>;

export class BlobTooLargeError extends Error {
  constructor(
    readonly size: number,
    readonly maxBytes: number,
    /** What the bytes are, for the message: 'artifact', 'suite archive'. */
    readonly what = 'artifact',
  ) {
    super(`${size} bytes is over the ${maxBytes}-byte ${what} limit`);
    this.name = 'BlobTooLargeError';
  }
}

/** The name artifact code knows it by. */
export { BlobTooLargeError as ArtifactTooLargeError };

const FILE_PREFIX = 'file:';
const SAFE_ID = /^[A-Za-z0-9-]{8,64}$/;

export class FileBlobStore implements ArtifactBlobStore {
  constructor(
    /** `<data dir>/artifacts` (or `<data dir>/suites` for suite archives) */
    readonly root: string,
    readonly maxBytes: number = DEFAULT_MAX_ARTIFACT_BYTES,
    /** What the bytes are, for errors. */
    readonly what = 'artifact',
  ) {}

  async put(id: string, file: string): Promise<{ location: string; size: number }> {
    if (!SAFE_ID.test(id)) throw new Error(`${this.what} id ${JSON.stringify(id)} is not a safe file name`);
    const { size } = await stat(file);
    if (size > this.maxBytes) throw new BlobTooLargeError(size, this.maxBytes, this.what);
    // Two-character fan-out keeps folders small however many artifacts accumulate.
    const relative = path.posix.join(id.slice(0, 2), id);
    const target = path.join(this.root, relative);
    await mkdir(path.dirname(target), { recursive: true });
    // Copied aside, then renamed in: a reader of the same id (a content-addressed
    // archive stored twice at once) sees the old bytes or the new, never half.
    const partial = `${target}.${randomUUID()}.partial`;
    try {
      await copyFile(file, partial);
      await rename(partial, target);
    } catch (error) {
      await unlink(partial).catch(() => undefined);
      throw error;
    }
    return { location: FILE_PREFIX + relative, size };
  }

  async open(location: string): Promise<Readable | undefined> {
    const target = this.pathOf(location);
    if (target === undefined) return undefined;
    try {
      await stat(target);
    } catch {
      return undefined;
    }
    return createReadStream(target);
  }

  async remove(locations: readonly string[]): Promise<void> {
    for (const location of locations) {
      const target = this.pathOf(location);
      if (target === undefined) continue;
      await unlink(target).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    }
  }

  /** Only locations this store made, and never outside its root (the location comes from the database). */
  private pathOf(location: string): string | undefined {
    if (!location.startsWith(FILE_PREFIX)) return undefined;
    const relative = location.slice(FILE_PREFIX.length);
    const [fan, id, ...rest] = relative.split('/');
    if (rest.length > 0 || fan === undefined || id === undefined || !SAFE_ID.test(id) || fan !== id.slice(0, 2)) return undefined;
    return path.join(this.root, fan, id);
  }
}
