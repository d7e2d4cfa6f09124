/**
 * Hostile archives (issue 39) against both readers of a suite archive: the
 * API's inspection of an upload (src/suites/inspect.ts) and a worker's
 * unpacking (src/suites/archive.ts), both read under SUITE_READ_LIMITS
 * (src/suites/tar-feed.ts). Each archive is real gzip of a real tar, written
 * to a real file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { SUITE_READ_LIMITS } from '../../src/core/suites.js';
import { unpackArchive } from '../../src/suites/archive.js';
import { inspectSuiteArchive, SuiteRefusal } from '../../src/suites/inspect.js';
import { archiveOf, gzippedTwice, HOSTILE_CONFIG, longPaths, tarOf, trailingBomb, type HostileArchive } from '../helpers/hostile-archives.js';

function written(archive: HostileArchive): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'runset-hostile-')), 'suite.tgz');
  writeFileSync(file, archive.bytes);
  return file;
}

async function refusalOf(archive: HostileArchive): Promise<string> {
  try {
    await inspectSuiteArchive(written(archive), { id: archive.id, maxBytes: 50 * 1024 * 1024 });
  } catch (error) {
    assert.ok(error instanceof SuiteRefusal, String(error));
    assert.equal(error.code, 'bad_archive');
    return error.message;
  }
  throw new Error('expected a refusal');
}

/** What a worker's unpacking throws for `archive`, and the files it left (none may be outside `dir`). */
async function unpackRefusal(archive: HostileArchive): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-hostile-unpack-'));
  const error = await unpackArchive(written(archive), dir).then(() => null, (err: Error) => err);
  assert.ok(error, 'expected the unpacking to be refused');
  return error.message;
}

test('a path longer than pathBytes is refused, naming the limit, and shown cut short', async () => {
  const message = await refusalOf(await longPaths(1, 2000));
  assert.match(message, new RegExp(`is a path of 2000 bytes; a path is at most ${SUITE_READ_LIMITS.pathBytes} bytes`));
  assert.ok(message.length < 400, 'the refusal shows the path cut short');
});

test('megabyte paths (the issue\'s 1 MB a path) are refused at their extended header, never buffered', async () => {
  const message = await refusalOf(await longPaths(20, 1024 * 1024));
  assert.match(message, new RegExp(`an extended header \\(NextFileHasLongPath\\) of 1048\\d+ bytes; an extended header is at most ${SUITE_READ_LIMITS.metaBytes} bytes`));
});

test('paths within pathBytes but past nameBytes in all are refused, naming the limit', async () => {
  const count = Math.ceil(SUITE_READ_LIMITS.nameBytes / 1000) + 10;
  assert.match(await refusalOf(await longPaths(count, 1000)), new RegExp(`its paths hold more than ${SUITE_READ_LIMITS.nameBytes} bytes in all`));
});

test('zeros after the end-of-archive marker (a 24 MiB bomb in ~24 KB) are refused by the ratio limit', async () => {
  const bomb = trailingBomb(24);
  assert.ok(bomb.bytes.length < 40_000, `the bomb is small (${bomb.bytes.length} bytes)`);
  assert.match(await refusalOf(bomb), new RegExp(`inflates to more than ${SUITE_READ_LIMITS.ratio} times its ${bomb.bytes.length} bytes \\(the compression ratio limit is ${SUITE_READ_LIMITS.ratio}:1\\)`));
  // the variant, 96 random bytes a MiB (under 1,000:1, stored before): refused at the first of them
  assert.match(await refusalOf(trailingBomb(24, 96)), /holds data after its end-of-archive marker/);
});

test('a bomb under the ratio (random bytes among the zeros) is refused for its data after the end marker', async () => {
  const bomb = trailingBomb(24, 8192);
  assert.ok(bomb.bytes.length * SUITE_READ_LIMITS.ratio > 25 * 1024 * 1024, 'the bomb is under the ratio');
  assert.match(await refusalOf(bomb), /holds data after its end-of-archive marker; only zeros may follow it/);
});

test('zeros after the marker within the ratio (tar\'s record padding) are read and accepted', async () => {
  const padded = archiveOf(gzipSync(Buffer.concat([tarOf([{ path: 'runset.config.yaml', content: HOSTILE_CONFIG }]), Buffer.alloc(9 * 1024)])));
  const seen = await inspectSuiteArchive(written(padded), { id: padded.id, maxBytes: 1_000_000 });
  assert.deepEqual(seen.paths, ['runset.config.yaml']);
});

test('a tar gzipped twice is refused (node-tar would inflate the inner gzip on the event loop)', async () => {
  assert.match(await refusalOf(gzippedTwice()), /compressed again inside the gzip/);
});

test('a worker unpacks under the same limits: a long path, a zero bomb and data after the marker are refused', async () => {
  assert.match(await unpackRefusal(await longPaths(3, 2000)), /holds what a suite may not: .* a path is at most 1024 bytes/);
  assert.match(await unpackRefusal(await longPaths(3, 1024 * 1024)), /an extended header is at most 65536 bytes/);
  assert.match(await unpackRefusal(trailingBomb(24)), /compression ratio limit is 200:1/);
  assert.match(await unpackRefusal(trailingBomb(24, 8192)), /data after its end-of-archive marker/);
});

test('a worker still unpacks a good archive followed by padding zeros', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-hostile-good-'));
  const good = archiveOf(gzipSync(Buffer.concat([tarOf([{ path: 'runset.config.yaml', content: HOSTILE_CONFIG }, { path: 'a/b.txt', content: 'b' }]), Buffer.alloc(9 * 1024)])));
  await unpackArchive(written(good), dir);
  assert.deepEqual(readdirSync(dir).sort(), ['a', 'runset.config.yaml']);
});
