/**
 * A request body streamed to a scratch file, never held in memory, cut off
 * once more than `maxBytes` have come (BlobTooLargeError, also when the
 * declared Content-Length says so before a byte is read), and removed once
 * `use` is done with it: what every upload route (artifacts, suite versions)
 * does before it checks and stores the bytes.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BlobTooLargeError } from '../artifacts/blobs.js';

export async function withUploadedFile<T>(
  body: Readable,
  limit: { maxBytes: number; what: string; declared: number },
  use: (file: string) => Promise<T>,
): Promise<T> {
  if (Number.isFinite(limit.declared) && limit.declared > limit.maxBytes) throw new BlobTooLargeError(limit.declared, limit.maxBytes, limit.what);
  const dir = await mkdtemp(path.join(tmpdir(), 'runset-upload-'));
  try {
    const file = path.join(dir, 'bytes');
    let seen = 0;
    const cutOff = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen += chunk.length;
        if (seen > limit.maxBytes) callback(new BlobTooLargeError(seen, limit.maxBytes, limit.what));
        else callback(null, chunk);
      },
    });
    await pipeline(body, cutOff, createWriteStream(file));
    return await use(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
