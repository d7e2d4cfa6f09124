/**
 * A version's archive on a worker: received from the service into a temp file
 * while hashed (its id is the SHA-256 of its bytes, so bytes that do not match
 * are not that version and are refused), then unpacked into a fresh folder
 * under the one rule of what an archive may hold (./entries.ts). node-tar never
 * writes outside the folder it unpacks into (no absolute paths, no `..`, no
 * links are written: the filter skips every entry the rule refuses, and an
 * archive with one is refused as a whole, reading stopping there).
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, rm } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { countRefusal, entryRefusal, nameBytesRefusal, unpackedRefusal } from './entries.js';
import { FED_PARSER_OPTIONS, feedArchive } from './tar-feed.js';

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
 * modes from the archive, readable by all, as packing fixes them), read under
 * the same limits as an upload (./tar-feed.ts: inflated off the event loop,
 * stopping at the end-of-archive marker). Throws, saying which entry or limit,
 * at the first entry the rule refuses; the caller removes `dir` then.
 */
export async function unpackArchive(file: string, dir: string): Promise<void> {
  const found: { refusal: string | null } = { refusal: null }; // set by the filter, read after the feed
  let entries = 0;
  let unpacked = 0;
  let nameBytes = 0;
  // node-tar loads with the first archive unpacked: a worker that never runs an uploaded suite skips it (~0.035 s of CPU).
  const tar = await import('tar');
  const unpack = new tar.Unpack({
    ...FED_PARSER_OPTIONS,
    cwd: dir,
    preserveOwner: false,
    umask: 0o022,
    filter: (entryPath, entry) => {
      entries++;
      unpacked += entry.size ?? 0;
      nameBytes += Buffer.byteLength(entryPath);
      const type = 'type' in entry ? entry.type : 'File';
      found.refusal ??= entryRefusal({ path: entryPath, type, size: entry.size ?? 0 }) ?? countRefusal(entries) ?? unpackedRefusal(unpacked) ?? nameBytesRefusal(nameBytes);
      return found.refusal === null;
    },
  });
  try {
    await feedArchive(file, unpack, () => found.refusal);
  } catch (err) {
    if (found.refusal !== null) throw new Error(`the suite version's archive holds what a suite may not: ${found.refusal}`, { cause: err });
    throw new Error(`cannot unpack the suite version's archive: ${messageOf(err)}`, { cause: err });
  }
  // mkdtemp made it 0700: other users (--run-as's) read the version too.
  await chmod(dir, 0o755);
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
