/**
 * What the API checks of an uploaded archive before storing it, reading the
 * file once: its SHA-256 is the id it was sent under, it is within the size
 * limit, it is a gzipped tar of plain files and folders under its root (the one
 * rule of ./entries.ts, each path once), within MAX_SUITE_FILES, with
 * runset.config.yaml at its root. It also hands back that config's text and
 * the shipped listing (LISTING_FILE), so the route can check the config with
 * the server's environments (src/config/suite-tests-only.ts) and turn the
 * listing into cases (src/config/suite-listing.ts). Nothing is unpacked.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Parser, type ReadEntry } from 'tar';
import { LISTING_FILE, MAX_LISTING_BYTES, SUITE_CONFIG_FILE } from '../core/suites.js';
import { countRefusal, entryRefusal, unpackedRefusal } from './entries.js';

/** Largest runset.config.yaml read from an archive: a config is a few kilobytes. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** 400: the bytes are not the ones named; 413: past the size limit; 422: the archive or its content is refused. */
export type SuiteRefusalCode = 'hash_mismatch' | 'too_large' | 'bad_archive';

/** An upload refused: `code` for the route's status, the message for the answer's detail. */
export class SuiteRefusal extends Error {
  readonly code: SuiteRefusalCode;
  constructor(code: SuiteRefusalCode, message: string) {
    super(message);
    this.name = 'SuiteRefusal';
    this.code = code;
  }
}

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
 * not `id`, then what is wrong with the archive itself.
 */
export async function inspectSuiteArchive(file: string, limits: { id: string; maxBytes: number }): Promise<SuiteInspection> {
  const hash = createHash('sha256');
  const reader = new EntryReader();
  const parser = new Parser({ strict: true, onReadEntry: (entry) => reader.read(entry) });
  const parsed = new Promise<void>((resolve) => {
    parser.on('end', () => resolve());
    parser.on('error', (error: Error) => {
      reader.refuse(`it is not a readable tar archive (${error.message})`);
      resolve();
    });
  });
  let size = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    if (size === 0 && !GZIP_MAGIC.every((byte, i) => chunk[i] === byte)) reader.refuse('it is not gzip-compressed; a suite version is a .tar.gz (runset suites push makes one)');
    size += chunk.length;
    if (size > limits.maxBytes) throw new SuiteRefusal('too_large', `the archive is larger than ${limits.maxBytes} bytes, the server's limit (--max-suite-size)`);
    hash.update(chunk);
    if (reader.problem === null) parser.write(chunk);
  }
  if (size === 0) reader.refuse('the body is empty; expected the bytes of a .tar.gz');
  if (reader.problem === null) {
    parser.end();
    await parsed;
  }
  const digest = hash.digest('hex');
  if (digest !== limits.id) throw new SuiteRefusal('hash_mismatch', `the body's SHA-256 is ${digest}, not the id it was sent under (${limits.id})`);
  return reader.result(size);
}

/** Checks each entry as the parser meets it and keeps what the route needs; the first problem stops it. */
class EntryReader {
  problem: string | null = null;
  readonly #paths: string[] = [];
  readonly #seen = new Set<string>();
  #unpacked = 0;
  #config: Buffer[] | null = null;
  #listing: Buffer[] | null = null;

  refuse(problem: string): void {
    this.problem ??= problem;
  }

  read(entry: ReadEntry): void {
    if (this.problem !== null) return void entry.resume();
    this.#unpacked += entry.size;
    const refusal = entryRefusal({ path: entry.path, type: entry.type, size: entry.size }) ?? countRefusal(this.#paths.length + 1) ?? unpackedRefusal(this.#unpacked);
    const key = entry.path.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    if (refusal === null && this.#seen.has(key)) this.refuse(`${JSON.stringify(entry.path)} appears twice; each path once`);
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
