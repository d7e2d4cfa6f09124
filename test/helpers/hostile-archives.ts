/**
 * Hostile suite archives (issue 39), written header by header with node-tar's
 * Header so that nothing refuses to write them: long paths in GNU long-name
 * entries, a valid tar followed by zeros (a decompression bomb) or by zeros
 * with random bytes among them (a bomb under the compression ratio), a tar
 * gzipped twice. Each comes with its id (the SHA-256 of its bytes), as an
 * upload sends it. Used by the unit, e2e and bench code alike.
 */
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createGzip, gzipSync } from 'node:zlib';
import { Header, type types } from 'tar';

export const HOSTILE_CONFIG = 'tests:\n  - { name: a, type: http, url: "http://x" }\n';

export interface TarEntry {
  path: string;
  type?: types.EntryTypeName;
  content?: string | Buffer;
}

export interface HostileArchive {
  id: string;
  bytes: Buffer;
}

/** The blocks of `entries`, a path past ustar's 100 bytes in a GNU long-name entry before its header; no end marker. */
export function tarBlocks(entries: readonly TarEntry[]): Buffer[] {
  const blocks: Buffer[] = [];
  const push = (header: { path: string; type: types.EntryTypeName }, content: Buffer) => {
    const block = Buffer.alloc(512);
    new Header({ ...header, size: content.length, mode: 0o644, mtime: new Date(0), uid: 0, gid: 0 }).encode(block);
    blocks.push(block, content, Buffer.alloc((512 - (content.length % 512)) % 512));
  };
  for (const entry of entries) {
    const content = Buffer.from(entry.content ?? '');
    if (Buffer.byteLength(entry.path) > 100) push({ path: '././@LongLink', type: 'NextFileHasLongPath' }, Buffer.from(`${entry.path}\0`));
    push({ path: Buffer.byteLength(entry.path) > 100 ? 'long' : entry.path, type: entry.type ?? 'File' }, content);
  }
  return blocks;
}

/** A whole tar of `entries`, ended by the two zero blocks of its end-of-archive marker. */
export function tarOf(entries: readonly TarEntry[]): Buffer {
  return Buffer.concat([...tarBlocks(entries), Buffer.alloc(1024)]);
}

export function archiveOf(bytes: Buffer): HostileArchive {
  return { id: createHash('sha256').update(bytes).digest('hex'), bytes };
}

/** `count` entries whose paths are each `pathBytes` long (and unique), after a good config; gzipped as made (1 MB paths by the thousand are gigabytes of tar). */
export async function longPaths(count: number, pathBytes: number): Promise<HostileArchive> {
  const gzip = createGzip({ level: 1 });
  const out: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = once(gzip, 'end');
  const write = async (blocks: Buffer[]) => {
    for (const block of blocks) if (!gzip.write(block)) await once(gzip, 'drain');
  };
  await write(tarBlocks([{ path: 'runset.config.yaml', content: HOSTILE_CONFIG }]));
  for (let i = 0; i < count; i++) await write(tarBlocks([{ path: `${i}-`.padEnd(pathBytes, 'a'), content: '' }]));
  gzip.end(Buffer.alloc(1024));
  await ended;
  return archiveOf(Buffer.concat(out));
}

/**
 * A good suite's tar, then `mib` MiB of zeros after its end-of-archive marker,
 * with `noisePerMiB` random bytes in each MiB (0: a pure zero bomb; some: the
 * ratio stays low while the bytes inflate to the same size).
 */
export function trailingBomb(mib: number, noisePerMiB = 0): HostileArchive {
  const good = tarOf([{ path: 'runset.config.yaml', content: HOSTILE_CONFIG }]);
  const mebibyte = Buffer.alloc(1024 * 1024);
  const parts: Buffer[] = [good];
  for (let i = 0; i < mib; i++) {
    const part = Buffer.from(mebibyte);
    if (noisePerMiB > 0) randomBytes(noisePerMiB).copy(part, part.length - noisePerMiB);
    parts.push(part);
  }
  return archiveOf(gzipSync(Buffer.concat(parts), { level: 9 }));
}

/**
 * The worst bomb under the ratio: `mib` MiB of zeros after the end marker, then
 * `noiseKiB` KiB of random bytes at the very end, so that the whole of it must
 * be inflated before anything but zeros is seen.
 */
export function lateNoiseBomb(mib: number, noiseKiB: number): HostileArchive {
  const good = tarOf([{ path: 'runset.config.yaml', content: HOSTILE_CONFIG }]);
  return archiveOf(gzipSync(Buffer.concat([good, Buffer.alloc(mib * 1024 * 1024), randomBytes(noiseKiB * 1024)]), { level: 9 }));
}

/** A good suite's tar gzipped twice: node-tar would inflate the inner gzip itself, on the event loop. */
export function gzippedTwice(): HostileArchive {
  return archiveOf(gzipSync(gzipSync(tarOf([{ path: 'runset.config.yaml', content: HOSTILE_CONFIG }]))));
}
