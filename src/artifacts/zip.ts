/**
 * Just enough ZIP to rewrite a Playwright trace: read the entries of an archive
 * (stored or deflated, through its central directory, so data descriptors are
 * fine) and write entries back out. Used to mask secret values inside traces
 * (src/artifacts/scrub.ts); nothing else in runset reads or writes archives.
 *
 * Not supported, on purpose: ZIP64 (over 65535 entries or 4 GiB), encryption,
 * multi-disk archives. Such input throws ZipFormatError and the caller decides.
 */
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';

export class ZipFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ZipFormatError';
  }
}

export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated. */
  method: number;
  /** DOS time and date, kept as they were. */
  time: number;
  date: number;
  crc: number;
  size: number;
  /** The entry's bytes as stored in the archive (compressed when method is 8). */
  raw: Buffer;
}

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_END = 0x06054b50;

export function readZip(zip: Buffer): ZipEntry[] {
  const end = findEnd(zip);
  const count = zip.readUInt16LE(end + 10);
  const cdOffset = zip.readUInt32LE(end + 16);
  if (count === 0xffff || cdOffset === 0xffffffff) throw new ZipFormatError('ZIP64 archives are not supported');
  const entries: ZipEntry[] = [];
  let at = cdOffset;
  for (let i = 0; i < count; i++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== SIG_CENTRAL) throw new ZipFormatError('broken central directory');
    const flags = zip.readUInt16LE(at + 8);
    const method = zip.readUInt16LE(at + 10);
    if ((flags & 1) !== 0) throw new ZipFormatError('encrypted entries are not supported');
    if (method !== 0 && method !== 8) throw new ZipFormatError(`compression method ${method} is not supported`);
    const compressed = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const skip = nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    if (local + 30 > zip.length || zip.readUInt32LE(local) !== SIG_LOCAL) throw new ZipFormatError('broken local header');
    const dataStart = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    if (dataStart + compressed > zip.length) throw new ZipFormatError('entry runs past the end of the archive');
    entries.push({
      name: zip.toString('utf8', at + 46, at + 46 + nameLength),
      method,
      time: zip.readUInt16LE(at + 12),
      date: zip.readUInt16LE(at + 14),
      crc: zip.readUInt32LE(at + 16),
      size: zip.readUInt32LE(at + 24),
      raw: zip.subarray(dataStart, dataStart + compressed),
    });
    at += 46 + skip;
  }
  return entries;
}

/** The entry's uncompressed bytes. */
export function entryData(entry: ZipEntry): Buffer {
  return entry.method === 8 ? inflateRawSync(entry.raw) : Buffer.from(entry.raw);
}

/** An entry with new content, deflated. */
export function withData(entry: ZipEntry, data: Buffer): ZipEntry {
  return { ...entry, method: 8, crc: crc32(data) >>> 0, size: data.length, raw: deflateRawSync(data) };
}

export function writeZip(entries: readonly ZipEntry[]): Buffer {
  if (entries.length >= 0xffff) throw new ZipFormatError('too many entries for a non-ZIP64 archive');
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(SIG_LOCAL, 0);
    local.writeUInt16LE(20, 4); // version needed: 2.0 (deflate)
    local.writeUInt16LE(0x0800, 6); // UTF-8 names; sizes are known, so no data descriptor
    writeCommon(local, 8, entry, name.length);
    const header = Buffer.alloc(46);
    header.writeUInt32LE(SIG_CENTRAL, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(20, 6);
    header.writeUInt16LE(0x0800, 8);
    writeCommon(header, 10, entry, name.length);
    header.writeUInt32LE(offset, 42);
    parts.push(local, name, entry.raw);
    central.push(header, name);
    offset += local.length + name.length + entry.raw.length;
    if (offset > 0xffffffff) throw new ZipFormatError('archive over 4 GiB');
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(SIG_END, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cd, end]);
}

/** method, time, date, crc, sizes and name length: the same layout in local and central headers. */
function writeCommon(buffer: Buffer, at: number, entry: ZipEntry, nameLength: number): void {
  buffer.writeUInt16LE(entry.method, at);
  buffer.writeUInt16LE(entry.time, at + 2);
  buffer.writeUInt16LE(entry.date, at + 4);
  buffer.writeUInt32LE(entry.crc >>> 0, at + 6);
  buffer.writeUInt32LE(entry.raw.length, at + 10);
  buffer.writeUInt32LE(entry.size, at + 14);
  buffer.writeUInt16LE(nameLength, at + 18);
}

/** The end-of-central-directory record: in the last 22 bytes, or before a comment of up to 64 KiB. */
function findEnd(zip: Buffer): number {
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (zip.readUInt32LE(at) === SIG_END) return at;
  }
  throw new ZipFormatError('not a ZIP archive (no end of central directory)');
}
