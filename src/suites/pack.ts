/**
 * Packs a suite's folder into a version (src/core/suites.ts): a gzipped tar
 * whose bytes depend on the content only, so the same suite always has the same
 * id and uploads nothing twice. Entries are sorted by path; headers carry no
 * mtime (the epoch), owner or user names; modes are 0644, or 0755 for folders
 * and files with an executable bit; the gzip header has no timestamp and names
 * Unix as its system whatever packed it. The tar is written here (node-tar's
 * Header and Pax), not by node-tar's packer, which copies modes and times from
 * the disk.
 *
 * The listing (LISTING_FILE) goes in with the files. Limits are checked before
 * anything is uploaded: the count while walking, the size while compressing
 * (it stops at the limit rather than compressing the rest).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { Header, Pax } from 'tar';
import { DEFAULT_MAX_SUITE_BYTES, LISTING_FILE, MAX_LISTING_BYTES, SUITE_CONFIG_FILE, type SuiteListing } from '../core/suites.js';
import { countRefusal } from './entries.js';
import { leftOutNotes } from './left-out.js';
import { NPMRC, projectNpmSettings } from './npmrc.js';
import { SuitePackError, walkSuite, type WalkedEntry } from './walk.js';

export { SuitePackError } from './walk.js';

export interface PackOptions {
  /** Largest archive, bytes (the server's --max-suite-size). Default DEFAULT_MAX_SUITE_BYTES. */
  maxBytes?: number;
  /** What the uploader's Playwright and frameworks listed; written at LISTING_FILE. */
  listing?: SuiteListing;
}

export interface PackedSuite {
  archive: Buffer;
  /** SHA-256 hex of `archive`: the version's id. */
  id: string;
  /** Entries in the archive, files and folders (the listing's included). */
  files: number;
  size: number;
  /** What the packer changed or left out that the suite may need (for people, one a line). */
  notes: string[];
}

const BLOCK = 512;
const EPOCH = new Date(0);
/** Byte 9 of a gzip header is the system that wrote it; zlib's varies by platform. 3: Unix. */
const GZIP_OS_BYTE = 9;
const GZIP_OS_UNIX = 3;
const GZIP_LEVEL = 6;

export async function packSuite(dir: string, options: PackOptions = {}): Promise<PackedSuite> {
  const root = path.resolve(dir);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SUITE_BYTES;
  if (!existsSync(path.join(root, SUITE_CONFIG_FILE))) {
    throw new SuitePackError(`${root} has no ${SUITE_CONFIG_FILE}; pass the folder of the suite's ${SUITE_CONFIG_FILE}`);
  }
  const { entries, leftOut } = await walkSuite(root);
  if (!entries.some((e) => e.path === SUITE_CONFIG_FILE)) {
    throw new SuitePackError(`${path.join(root, SUITE_CONFIG_FILE)} is left out by an ignore file (.gitignore or .runsetignore); a suite's archive must hold it`);
  }
  const extra = options.listing === undefined ? [] : listingEntries(options.listing, entries);
  const notes = await leftOutNotes(root, entries, leftOut, options.listing);
  const packed = await Promise.all(entries.map((e) => withoutCredentials(e, notes)));
  const all = [...packed, ...extra].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const tooMany = countRefusal(all.length);
  if (tooMany !== null) throw new SuitePackError(`${root}: ${tooMany}; list what the tests do not need in .runsetignore`);
  const archive = await compress(tarStream(all), maxBytes, root);
  archive[GZIP_OS_BYTE] = GZIP_OS_UNIX;
  return { archive, id: createHash('sha256').update(archive).digest('hex'), files: all.length, size: archive.length, notes };
}

/** An `.npmrc` goes with its settings and without its credential lines (./npmrc.ts), which a note names. */
async function withoutCredentials(entry: WalkedEntry, notes: string[]): Promise<PackEntry> {
  if (entry.type !== 'File' || path.posix.basename(entry.path) !== NPMRC) return entry;
  const settings = projectNpmSettings(await readFile(entry.absolute, 'utf8'));
  if (settings.dropped.length === 0) return entry;
  notes.push(`${entry.path}: ${settings.dropped.join(', ')} left out of the upload: a credential never leaves this machine (a worker's npm uses its own, from its user's ~/.npmrc)`);
  const content = Buffer.from(settings.text);
  return { path: entry.path, type: 'File', size: content.length, executable: entry.executable, content };
}

/** An entry whose bytes are given rather than read from the disk. */
type PackEntry = WalkedEntry | (Omit<WalkedEntry, 'absolute'> & { content: Buffer });

function listingEntries(listing: SuiteListing, walked: readonly WalkedEntry[]): PackEntry[] {
  const content = Buffer.from(JSON.stringify(listing));
  if (content.length > MAX_LISTING_BYTES) {
    throw new SuitePackError(`the listing of its Playwright and framework entries is ${content.length} bytes, more than ${MAX_LISTING_BYTES}; narrow the suite's entries (grep, project) or split it`);
  }
  const folder = `${path.posix.dirname(LISTING_FILE)}/`;
  const out: PackEntry[] = [{ path: LISTING_FILE, type: 'File', size: content.length, executable: false, content }];
  if (!walked.some((e) => e.path === folder)) out.push({ path: folder, type: 'Directory', size: 0, executable: true, content: Buffer.alloc(0) });
  return out;
}

/** The tar's bytes, entry by entry; a file is read when its turn comes. */
async function* tarStream(entries: readonly PackEntry[]): AsyncGenerator<Buffer> {
  for (const entry of entries) {
    const content = entry.type === 'Directory' ? Buffer.alloc(0) : 'content' in entry ? entry.content : await readFile(entry.absolute);
    const fields = {
      path: entry.path,
      mode: entry.type === 'Directory' || entry.executable ? 0o755 : 0o644,
      size: content.length,
      mtime: EPOCH,
      type: entry.type,
      uid: 0,
      gid: 0,
      uname: '',
      gname: '',
    };
    const header = new Header(fields);
    const block = Buffer.alloc(BLOCK);
    header.encode(block);
    // A path past ustar's 100 (+155 prefix) bytes goes in a pax header before it, as tar itself does.
    if (header.needPax) yield new Pax({ path: entry.path, size: content.length, mtime: EPOCH }).encode();
    yield block;
    if (content.length > 0) {
      yield content;
      const pad = (BLOCK - (content.length % BLOCK)) % BLOCK;
      if (pad > 0) yield Buffer.alloc(pad);
    }
  }
  yield Buffer.alloc(BLOCK * 2);
}

async function compress(source: AsyncIterable<Buffer>, maxBytes: number, root: string): Promise<Buffer> {
  // zlib's default level: on a suite's text within a few per cent of level 9's size, in about half its time
  // (bench:suites: a 10 MB suite packed in 330 ms at 9). Fixed, so the same content keeps its id.
  const gzip = createGzip({ level: GZIP_LEVEL });
  Readable.from(source).on('error', (error) => gzip.destroy(error)).pipe(gzip);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of gzip as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      gzip.destroy();
      throw new SuitePackError(`${root} packs to more than ${maxBytes} bytes, the size limit; list what the tests do not need (build output, videos, data) in .runsetignore`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
