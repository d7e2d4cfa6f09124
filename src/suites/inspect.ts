/**
 * What the API checks of an uploaded archive before storing it, reading the
 * file twice (hashing, then inflating under limits): its SHA-256 is the id it was sent under, it is within the size
 * limit, it is a gzipped tar of plain files and folders under its root (the one
 * rule of ./entries.ts, each path once), within MAX_SUITE_FILES, with
 * runset.config.yaml at its root. It also hands back that config's text and
 * the shipped listing (LISTING_FILE), so the route can check the config with
 * the server's environments (src/config/suite-tests-only.ts) and turn the
 * listing into cases (src/config/suite-listing.ts). Nothing is unpacked.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { ReadEntry } from 'tar';
import { LISTING_FILE, MAX_LISTING_BYTES, SUITE_CONFIG_FILE } from '../core/suites.js';
import { countRefusal, entryRefusal, nameBytesRefusal, shownPath, SuiteRefusal, unpackedRefusal } from './entries.js';
import { FED_PARSER_OPTIONS, feedArchive } from './tar-feed.js';

export { SuiteRefusal, type SuiteRefusalCode } from './entries.js';

/** Largest runset.config.yaml read from an archive: a config is a few kilobytes. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

export interface SuiteInspection {
  size: number;
  /** Entries in the archive, files and folders. */
  files: number;
  /** Every entry's path (a folder's ends in `/`), for checking the config's paths against. */
  paths: string[];
  configText: string;
  /** LISTING_FILE parsed, or null when the archive has none. */
  listing: unknown;
}

const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * Refuses with the first of: too large (reading stops there), a hash that is
 * not `id` (checked first: hashing is cheap, inflating is not), then what is
 * wrong with the archive itself, read under SUITE_READ_LIMITS (./tar-feed.ts).
 */
export async function inspectSuiteArchive(file: string, limits: { id: string; maxBytes: number }): Promise<SuiteInspection> {
  const size = await checkHash(file, limits);
  const reader = new EntryReader();
  // node-tar loads with the first upload inspected: most API processes never take one (~0.035 s of CPU at start).
  const { Parser } = await import('tar');
  const parser = new Parser({ ...FED_PARSER_OPTIONS, onReadEntry: (entry) => reader.read(entry) });
  await feedArchive(file, parser, () => reader.problem);
  return reader.result(size);
}

/** The file's size, once its SHA-256 is `id` and it is a non-empty gzip within `maxBytes`. */
async function checkHash(file: string, limits: { id: string; maxBytes: number }): Promise<number> {
  const hash = createHash('sha256');
  let size = 0;
  let gzip = true;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    if (size === 0) gzip = GZIP_MAGIC.every((byte, i) => chunk[i] === byte);
    size += chunk.length;
    if (size > limits.maxBytes) throw new SuiteRefusal('too_large', `the archive is larger than ${limits.maxBytes} bytes, the server's limit (--max-suite-size)`);
    hash.update(chunk);
  }
  const digest = hash.digest('hex');
  if (digest !== limits.id) throw new SuiteRefusal('hash_mismatch', `the body's SHA-256 is ${digest}, not the id it was sent under (${limits.id})`);
  if (size === 0) throw new SuiteRefusal('bad_archive', 'the archive is refused: the body is empty; expected the bytes of a .tar.gz');
  if (!gzip) throw new SuiteRefusal('bad_archive', 'the archive is refused: it is not gzip-compressed; a suite version is a .tar.gz (runset suites push makes one)');
  return size;
}

/** Checks each entry as the parser meets it and keeps what the route needs; the first problem stops it. */
class EntryReader {
  problem: string | null = null;
  readonly #paths: string[] = [];
  readonly #seen = new Set<string>();
  #unpacked = 0;
  #nameBytes = 0;
  #config: Buffer[] | null = null;
  #listing: Buffer[] | null = null;

  refuse(problem: string): void {
    this.problem ??= problem;
  }

  read(entry: ReadEntry): void {
    if (this.problem !== null) return void entry.resume();
    this.#unpacked += entry.size;
    this.#nameBytes += Buffer.byteLength(entry.path);
    const refusal = entryRefusal({ path: entry.path, type: entry.type, size: entry.size }) ?? countRefusal(this.#paths.length + 1) ?? unpackedRefusal(this.#unpacked) ?? nameBytesRefusal(this.#nameBytes);
    const key = entry.path.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    if (refusal === null && this.#seen.has(key)) this.refuse(`${shownPath(entry.path)} appears twice; each path once`);
    if (refusal !== null) this.refuse(refusal);
    if (this.problem !== null) return void entry.resume();
    this.#seen.add(key);
    this.#paths.push(entry.path);
    if (entry.type === 'Directory') return void entry.resume();
    if (key === SUITE_CONFIG_FILE) this.#config = this.#collect(entry, MAX_CONFIG_BYTES, `${SUITE_CONFIG_FILE} is larger than ${MAX_CONFIG_BYTES} bytes`);
    else if (key === LISTING_FILE) this.#listing = this.#collect(entry, MAX_LISTING_BYTES, `${LISTING_FILE} is larger than ${MAX_LISTING_BYTES} bytes`);
    else entry.resume();
  }

  #collect(entry: ReadEntry, limit: number, tooLarge: string): Buffer[] {
    const chunks: Buffer[] = [];
    if (entry.size > limit) {
      this.refuse(tooLarge);
      entry.resume();
      return chunks;
    }
    entry.on('data', (chunk: Buffer) => chunks.push(chunk));
    return chunks;
  }

  result(size: number): SuiteInspection {
    if (this.problem !== null) throw new SuiteRefusal('bad_archive', `the archive is refused: ${this.problem}`);
    if (this.#config === null) {
      throw new SuiteRefusal('bad_archive', `the archive has no ${SUITE_CONFIG_FILE} at its root; expected the suite's folder packed with its ${SUITE_CONFIG_FILE} at the top (runset suites push DIR)`);
    }
    let listing: unknown = null;
    if (this.#listing !== null) {
      try {
        listing = JSON.parse(Buffer.concat(this.#listing).toString('utf8'));
      } catch (error) {
        throw new SuiteRefusal('bad_archive', `${LISTING_FILE} is not JSON (${(error as Error).message})`);
      }
    }
    const configText = Buffer.concat(this.#config).toString('utf8');
    return { size, files: this.#paths.length, paths: [...this.#paths], configText, listing };
  }
}
