/**
 * What the upload route refuses (src/suites/inspect.ts), each with a real
 * archive: made by node-tar's create from a real folder, or header by header
 * with node-tar's Header where create will not write the entry (a device).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { create, Header, type types } from 'tar';
import { inspectSuiteArchive, SuiteRefusal, type SuiteRefusalCode } from '../../src/suites/inspect.js';

const CONFIG = 'tests:\n  - { name: a, type: http, url: "http://x" }\n';

interface HandEntry {
  path: string;
  type?: types.EntryTypeName;
  content?: string;
}

/** A .tar.gz written header by header, for entries node-tar's create would refuse or rewrite. */
function handTar(entries: readonly HandEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const content = Buffer.from(entry.content ?? '');
    const block = Buffer.alloc(512);
    new Header({ path: entry.path, type: entry.type ?? 'File', size: content.length, mode: 0o644, mtime: new Date(0), uid: 0, gid: 0 }).encode(block);
    blocks.push(block, content, Buffer.alloc((512 - (content.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

function written(archive: Buffer): { file: string; id: string } {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'runset-inspect-')), 'suite.tgz');
  writeFileSync(file, archive);
  return { file, id: createHash('sha256').update(archive).digest('hex') };
}

async function refusal(archive: Buffer, options: { id?: string; maxBytes?: number } = {}): Promise<SuiteRefusal> {
  const { file, id } = written(archive);
  try {
    await inspectSuiteArchive(file, { id: options.id ?? id, maxBytes: options.maxBytes ?? 10_000_000 });
  } catch (error) {
    if (error instanceof SuiteRefusal) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

function assertRefused(error: SuiteRefusal, code: SuiteRefusalCode, message: RegExp): void {
  assert.equal(error.code, code);
  assert.match(error.message, message);
}

/** A folder with the config, packed by node-tar's create with the given paths (relative to the folder). */
async function created(setup: (dir: string) => void, paths: string[], options: { preservePaths?: boolean } = {}): Promise<Buffer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-inspect-src-'));
  writeFileSync(path.join(dir, 'runset.config.yaml'), CONFIG);
  setup(dir);
  const out = path.join(dir, '..', `${path.basename(dir)}.tgz`);
  await create({ gzip: true, cwd: dir, file: out, portable: true, ...options }, ['runset.config.yaml', ...paths]);
  return readFileSync(out);
}

test('a good archive: size, count, paths, the config text; no listing is null', async () => {
  const archive = await created((dir) => writeFileSync(path.join(dir, 'a.txt'), 'a'), ['a.txt']);
  const { file, id } = written(archive);
  const seen = await inspectSuiteArchive(file, { id, maxBytes: 1_000_000 });
  assert.equal(seen.size, archive.length);
  assert.equal(seen.files, 2);
  assert.deepEqual(seen.paths, ['runset.config.yaml', 'a.txt']);
  assert.equal(seen.configText, CONFIG);
  assert.equal(seen.listing, null);
});

test('a symbolic link is refused (bad_archive), saying it is a link', async () => {
  const archive = await created((dir) => symlinkSync('/etc/passwd', path.join(dir, 'pw')), ['pw']);
  assertRefused(await refusal(archive), 'bad_archive', /"pw" is a link; a suite holds plain files and folders only/);
});

test('a path escaping the root, or absolute, is refused', async () => {
  assertRefused(await refusal(handTar([{ path: 'runset.config.yaml', content: CONFIG }, { path: '../x', content: 'x' }])), 'bad_archive', /"\.\.\/x" escapes the suite's folder/);
  assertRefused(await refusal(handTar([{ path: 'runset.config.yaml', content: CONFIG }, { path: 'a/../../x', content: 'x' }])), 'bad_archive', /escapes the suite's folder/);
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-inspect-abs-'));
  writeFileSync(path.join(dir, 'abs.txt'), 'x');
  const absolute = await created(() => undefined, [path.join(dir, 'abs.txt')], { preservePaths: true });
  assertRefused(await refusal(absolute), 'bad_archive', /is an absolute path/);
});

test('a device and a FIFO are refused, in words that fit them (no advice about links)', async () => {
  const device = await refusal(handTar([{ path: 'runset.config.yaml', content: CONFIG }, { path: 'tty', type: 'CharacterDevice' }]));
  assertRefused(device, 'bad_archive', /"tty" is a character device; a suite holds plain files and folders only$/);
  assert.doesNotMatch(device.message, /link/);
  assertRefused(await refusal(handTar([{ path: 'runset.config.yaml', content: CONFIG }, { path: 'p', type: 'FIFO' }])), 'bad_archive', /"p" is a FIFO/);
});

test('too many entries is refused', async () => {
  const many = Array.from({ length: 20_001 }, (_, i): HandEntry => ({ path: `d${i}/`, type: 'Directory' }));
  assertRefused(await refusal(handTar([{ path: 'runset.config.yaml', content: CONFIG }, ...many])), 'bad_archive', /more than 20000 files and folders/);
});

test('a path twice is refused: the config read here must be the one unpacked', async () => {
  const twice = handTar([{ path: 'runset.config.yaml', content: CONFIG }, { path: './runset.config.yaml', content: 'tests: [evil]\n' }]);
  assertRefused(await refusal(twice), 'bad_archive', /appears twice/);
});

test('a hash other than the id is refused (hash_mismatch), before what is wrong inside', async () => {
  const archive = handTar([{ path: 'runset.config.yaml', content: CONFIG }]);
  assertRefused(await refusal(archive, { id: 'f'.repeat(64) }), 'hash_mismatch', /not the id it was sent under/);
  assertRefused(await refusal(Buffer.from('not gzip at all'), { id: '0'.repeat(64) }), 'hash_mismatch', /SHA-256/);
});

test('over maxBytes is refused (too_large) without reading on', async () => {
  const archive = handTar([{ path: 'runset.config.yaml', content: CONFIG }]);
  assertRefused(await refusal(archive, { maxBytes: 20 }), 'too_large', /larger than 20 bytes/);
});

test('not gzip, not a tar, truncated, empty: bad_archive saying what is expected', async () => {
  assertRefused(await refusal(Buffer.from('plain text, no gzip')), 'bad_archive', /not gzip-compressed; a suite version is a \.tar\.gz/);
  assertRefused(await refusal(gzipSync(Buffer.from('gzip of something that is not a tar'))), 'bad_archive', /not a readable tar archive/);
  const good = handTar([{ path: 'runset.config.yaml', content: CONFIG }]);
  assertRefused(await refusal(good.subarray(0, good.length - 12)), 'bad_archive', /not a readable tar archive/);
  assertRefused(await refusal(Buffer.alloc(0)), 'bad_archive', /empty/);
});

test('no runset.config.yaml at the root is refused, saying what is expected', async () => {
  const nested = handTar([{ path: 'suite/', type: 'Directory' }, { path: 'suite/runset.config.yaml', content: CONFIG }]);
  assertRefused(await refusal(nested), 'bad_archive', /no runset\.config\.yaml at its root; expected the suite's folder packed with its runset\.config\.yaml at the top/);
});

test('a listing that is not JSON is refused; a good one is parsed', async () => {
  assertRefused(await refusal(handTar([{ path: 'runset.config.yaml', content: CONFIG }, { path: '.runset/listing.json', content: '{nope' }])), 'bad_archive', /listing\.json is not JSON/);
  const { file, id } = written(handTar([{ path: 'runset.config.yaml', content: CONFIG }, { path: '.runset/listing.json', content: '{"version":1,"reports":[]}' }]));
  assert.deepEqual((await inspectSuiteArchive(file, { id, maxBytes: 1_000_000 })).listing, { version: 1, reports: [] });
});
