/**
 * A version's archive on a worker: received from the service into a temp file
 * while hashed (its id is the SHA-256 of its bytes, so bytes that do not match
 * are not that version and are refused), then unpacked into a fresh folder
 * under the one rule of what an archive may hold (./entries.ts). node-tar never
 * writes outside the folder it unpacks into (no absolute paths, no `..`, no
 * links are written: the filter skips every entry the rule refuses, and an
 * archive with one is refused as a whole).
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, rm } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import { countRefusal, entryRefusal, unpackedRefusal } from './entries.js';

/** Fetches a version's archive by id (the worker link's `suiteArchive`). */
export type FetchArchive = (id: string, signal?: AbortSignal) => Promise<Readable>;

/** Writes the archive of version `id` to `file`, refusing (and removing) bytes whose SHA-256 is not `id`. */
export async function receiveArchive(id: string, file: string, fetchArchive: FetchArchive, signal?: AbortSignal): Promise<void> {
  const hash = createHash('sha256');
  let bytes = 0;
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  try {
    const body = await fetchArchive(id, signal);
    await pipeline(body, hashing, createWriteStream(file, { mode: 0o600 }), { signal });
  } catch (err) {
    await rm(file, { force: true });
    throw new Error(`cannot fetch suite version ${id}: ${messageOf(err)}`, { cause: err });
  }
  const got = hash.digest('hex');
  if (got !== id) {
    await rm(file, { force: true });
    throw new Error(`suite version ${id} arrived with other bytes (${bytes} bytes whose SHA-256 is ${got}); refusing to run them: the archive was changed or cut short on its way`);
  }
}

/**
 * Unpacks `file` into the existing folder `dir` (the worker owns every file;
 * modes from the archive, readable by all, as packing fixes them). Throws,
 * saying which entry, when the archive holds one the rule refuses; the caller
 * removes `dir` then.
 */
export async function unpackArchive(file: string, dir: string): Promise<void> {
  const refusals: string[] = [];
  let entries = 0;
  let unpacked = 0;
  try {
    await tar.x({
      file,
      cwd: dir,
      strict: true,
      preserveOwner: false,
      umask: 0o022,
      filter: (entryPath, entry) => {
        entries++;
        unpacked += entry.size ?? 0;
        const refusal = entryRefusal({ path: entryPath, type: 'type' in entry ? entry.type : 'File', size: entry.size ?? 0 }) ?? unpackedRefusal(unpacked);
        if (refusal) refusals.push(refusal);
        return refusal === null;
      },
    });
  } catch (err) {
    throw new Error(`cannot unpack the suite version's archive: ${messageOf(err)}`, { cause: err });
  }
  const tooMany = countRefusal(entries);
  if (tooMany) refusals.unshift(tooMany);
  if (refusals.length > 0) {
    throw new Error(`the suite version's archive holds what a suite may not: ${refusals.slice(0, 3).join('; ')}${refusals.length > 3 ? ` (and ${refusals.length - 3} more)` : ''}`);
  }
  // mkdtemp made it 0700: other users (--run-as's) read the version too.
  await chmod(dir, 0o755);
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
