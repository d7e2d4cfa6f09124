/**
 * From files an executor left in a batch's work folder to stored artifacts:
 * masked for secrets, copied into the blob store, described for the member's
 * outcome. Whatever cannot be kept is said in a note that goes into the
 * member's output, never silently dropped.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { ArtifactFile, NewArtifact } from '../core/types.js';
import { ArtifactTooLargeError, type ArtifactSink } from './blobs.js';
import { scrubFile } from './scrub.js';
import { takeFile, type FileReader } from './take.js';

export interface SavedArtifacts {
  artifacts: NewArtifact[];
  /** One line per file that was not kept, and why. */
  notes: string[];
}

export interface ArtifactSaver {
  /** `reader`: the user the member ran as, when not the saver's `readableBy` (a slot's own user). */
  save(files: readonly ArtifactFile[], secrets: readonly string[], workDir: string, reader?: FileReader): Promise<SavedArtifacts>;
  /** Removes the bytes of artifacts whose outcome could not be recorded (the lease was lost). */
  discard(artifacts: readonly NewArtifact[]): Promise<void>;
}

/** `readableBy`: the user tests run as (`--run-as`), whose rights decide which files may be kept (./take.ts). */
export function artifactSaver(blobs: ArtifactSink, options: { readableBy?: FileReader } = {}): ArtifactSaver {
  return {
    async save(files, secrets, workDir, reader = options.readableBy) {
      const saved: SavedArtifacts = { artifacts: [], notes: [] };
      for (const file of files) {
        try {
          const kept = await saveOne(blobs, file, secrets, workDir, reader);
          if (typeof kept === 'string') saved.notes.push(`artifact ${file.name} not kept: ${kept}`);
          else saved.artifacts.push(kept);
        } catch (error) {
          saved.notes.push(`artifact ${file.name} not kept: ${(error as Error).message}`);
        }
      }
      return saved;
    },
    discard(artifacts) {
      return blobs.remove(artifacts.map((a) => a.location));
    },
  };
}

/** The stored artifact, or why it was not kept. */
async function saveOne(blobs: ArtifactSink, file: ArtifactFile, secrets: readonly string[], workDir: string, reader: FileReader | undefined): Promise<NewArtifact | string> {
  const taken = await takeFile(file.path, reader);
  if (typeof taken === 'string') return taken;
  try {
    const scrubbed = await scrubFile(taken.path, file.contentType, secrets, workDir, path.basename(file.path));
    if (scrubbed.kind === 'dropped') return scrubbed.reason;
    const source = scrubbed.kind === 'scrubbed' ? scrubbed.file : taken.path;
    const id = randomUUID();
    try {
      const { location, size } = await blobs.put(id, source);
      return { id, name: file.name, contentType: file.contentType, size, location };
    } catch (error) {
      if (error instanceof ArtifactTooLargeError) return `${error.size} bytes is over the ${error.maxBytes}-byte limit`;
      throw error;
    }
  } finally {
    await taken.close();
  }
}
