/**
 * Reads a suite archive's file into a tar parser (the API's inspection, a
 * worker's unpacking) under SUITE_READ_LIMITS, without stalling the event
 * loop (issue 39). node-tar's own gzip handling inflates synchronously on the
 * main thread and, past the end-of-archive marker, appends what follows with a
 * Buffer.concat per chunk (a few KB of gzipped zeros stalled the API for
 * seconds), so the parser only ever sees plain tar bytes:
 *
 * - Node's asynchronous gunzip inflates on libuv's threadpool, a chunk at a
 *   time, with backpressure from the parser;
 * - inflated bytes are counted as they come against the ratio to the
 *   archive's size and the tar bytes limit;
 * - the parser is fed up to the end-of-archive marker and no further: what
 *   follows is read (counted, never kept) only to refuse anything but zeros;
 * - extended headers (a long path) past metaBytes are refused, not buffered.
 *
 * The first limit passed, or the parser's first error, stops the reading.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { constants, createGunzip } from 'node:zlib';
import type { Parser, ReadEntry } from 'tar';
import { SUITE_READ_LIMITS } from '../core/suites.js';
import { SuiteRefusal } from './entries.js';

const BLOCK = 512;

/** The options a parser fed by feedArchive is made with: extended headers no larger than SUITE_READ_LIMITS.metaBytes. */
export const FED_PARSER_OPTIONS = { strict: true, maxMetaEntrySize: SUITE_READ_LIMITS.metaBytes } as const;

/** Most tar bytes an archive of `size` bytes may inflate to, and the refusal when it goes past. */
export function inflatedLimit(size: number): { bytes: number; refusal: string } {
  const byRatio = Math.max(SUITE_READ_LIMITS.ratio * size, SUITE_READ_LIMITS.ratioFloorBytes);
  if (byRatio < SUITE_READ_LIMITS.tarBytes) {
    return { bytes: byRatio, refusal: `it inflates to more than ${SUITE_READ_LIMITS.ratio} times its ${size} bytes (the compression ratio limit is ${SUITE_READ_LIMITS.ratio}:1)` };
  }
  return { bytes: SUITE_READ_LIMITS.tarBytes, refusal: `it inflates to more than ${SUITE_READ_LIMITS.tarBytes} bytes of tar, the limit` };
}

/**
 * Feeds `file` (a .tar.gz) into `parser` (made with FED_PARSER_OPTIONS) and
 * ends it; resolves once the parser has ended. Throws a SuiteRefusal
 * ('bad_archive') naming the limit passed or what is unreadable, or the
 * problem `stopWhen` names once the parser's reader has found one.
 */
export async function feedArchive(file: string, parser: Parser, stopWhen: () => string | null = () => null): Promise<void> {
  const feed = new Feed(parser, inflatedLimit((await stat(file)).size), stopWhen);
  try {
    await pipeline(createReadStream(file), createGunzip({ chunkSize: 64 * 1024 }), (source: AsyncIterable<Buffer>) => feed.consume(source));
  } catch (err) {
    feed.throwIfFailed();
    throw refusalOf(err);
  }
  feed.throwIfFailed();
  parser.end();
  await feed.done;
  const problem = stopWhen();
  if (problem !== null) feed.fail(problem);
  feed.throwIfFailed();
}

/** One archive's reading: where it is in the tar, what it has counted, and the first failure. */
class Feed {
  failure: SuiteRefusal | null = null;
  readonly done: Promise<void>;
  #ended = false;
  #inflated = 0;
  #fed = 0;

  constructor(
    private readonly parser: Parser,
    private readonly limit: { bytes: number; refusal: string },
    private readonly stopWhen: () => string | null,
  ) {
    parser.on('eof', () => void (this.#ended = true));
    parser.on('ignoredEntry', (entry: ReadEntry) => {
      if (entry.meta) this.fail(`it holds an extended header (${entry.type}) of ${entry.size} bytes; an extended header is at most ${SUITE_READ_LIMITS.metaBytes} bytes (a path is at most ${SUITE_READ_LIMITS.pathBytes})`);
    });
    this.done = new Promise((resolve) => {
      parser.on('end', () => resolve());
      parser.on('error', (error: Error) => {
        this.fail(`it is not a readable tar archive (${error.message})`);
        resolve();
      });
    });
  }

  throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  fail(problem: string): void {
    this.failure ??= new SuiteRefusal('bad_archive', `the archive is refused: ${problem}`);
  }

  async consume(source: AsyncIterable<Buffer>): Promise<void> {
    for await (const chunk of source) {
      if (this.#inflated === 0 && isCompressed(chunk)) this.fail('its tar is compressed again inside the gzip; a suite version is a tar gzipped once');
      this.#inflated += chunk.length;
      if (this.#inflated > this.limit.bytes) this.fail(this.limit.refusal);
      const rest = this.#ended ? chunk : await this.#feed(chunk);
      if (!isZeros(rest)) this.fail(`it holds data after its end-of-archive marker; only zeros may follow it`);
      const problem = this.stopWhen();
      if (problem !== null) this.fail(problem);
      if (this.failure) return; // leaving the loop ends the pipeline: nothing more is read or inflated
    }
  }

  /**
   * Writes `chunk` to the parser, an all-zero block on its own (the marker is
   * two of them), so that the end is seen exactly where it is; returns the
   * part of the chunk that follows the marker (empty before it).
   */
  async #feed(chunk: Buffer): Promise<Buffer> {
    let start = 0;
    let at = (BLOCK - (this.#fed % BLOCK)) % BLOCK;
    if (at > 0) start = await this.#write(chunk, 0, Math.min(at, chunk.length));
    for (; at + BLOCK <= chunk.length && !this.#ended && !this.failure; at += BLOCK) {
      if (!isZeroBlock(chunk, at)) continue;
      if (at > start) await this.#write(chunk, start, at);
      start = await this.#write(chunk, at, at + BLOCK);
    }
    if (this.#ended || this.failure) return chunk.subarray(start);
    if (start < chunk.length) await this.#write(chunk, start, chunk.length);
    return chunk.subarray(chunk.length);
  }

  /** Writes chunk[from, to) unless the end or a failure came first, waiting while the parser is full; returns `to`. */
  async #write(chunk: Buffer, from: number, to: number): Promise<number> {
    if (this.#ended || this.failure) return from;
    this.#fed += to - from;
    if (!this.parser.write(chunk.subarray(from, to))) {
      await Promise.race([new Promise((resolve) => this.parser.once('drain', resolve)), this.done]);
    }
    return to;
  }
}

const ZEROS = Buffer.alloc(64 * 1024);

/** Compared natively (memcmp): a run of zeros may be a gigabyte. */
function isZeroBlock(chunk: Buffer, at: number): boolean {
  return chunk.compare(ZEROS, 0, BLOCK, at, at + BLOCK) === 0;
}

function isZeros(bytes: Buffer): boolean {
  for (let at = 0; at < bytes.length; at += ZEROS.length) {
    const end = Math.min(at + ZEROS.length, bytes.length);
    if (bytes.compare(ZEROS, 0, end - at, at, end) !== 0) return false;
  }
  return true;
}

/** Whether tar bytes start as gzip or zstd would: node-tar would inflate them again, synchronously. */
function isCompressed(chunk: Buffer): boolean {
  return (chunk[0] === 0x1f && chunk[1] === 0x8b) || (chunk[0] === 0x28 && chunk[1] === 0xb5 && chunk[2] === 0x2f && chunk[3] === 0xfd);
}

/** What a failure of reading or inflating the file answers: gzip's own words for what is wrong. */
function refusalOf(err: unknown): Error {
  const code = (err as { errno?: number }).errno;
  if (code === constants.Z_DATA_ERROR || code === constants.Z_BUF_ERROR) {
    const problem = (err as Error).message === 'incorrect header check'
      ? 'it is not gzip-compressed; a suite version is a .tar.gz (runset suites push makes one)'
      : `it is not a readable tar archive (gzip: ${(err as Error).message})`;
    return new SuiteRefusal('bad_archive', `the archive is refused: ${problem}`);
  }
  return err instanceof Error ? err : new Error(String(err));
}
