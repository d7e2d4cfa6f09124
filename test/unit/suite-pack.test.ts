/**
 * Packing a suite folder (src/suites/pack.ts): what goes in (ignore files,
 * never node_modules or .git), what is refused (links, devices, limits), and
 * that the same content always gives the same bytes, hence the same id.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { list } from 'tar';
import { packSuite, SuitePackError } from '../../src/suites/pack.js';
import { LISTING_FILE, SUITE_ID } from '../../src/core/suites.js';
import { inspectSuiteArchive } from '../../src/suites/inspect.js';

function suiteFolder(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-pack-'));
  const all = { 'runset.config.yaml': 'tests: []\n', 'tests/a.spec.ts': 'test 1\n', ...files };
  for (const [name, content] of Object.entries(all)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

async function entriesOf(archive: Buffer): Promise<Array<{ path: string; mode: number; mtime: number; uid: number; type: string }>> {
  const out: Array<{ path: string; mode: number; mtime: number; uid: number; type: string }> = [];
  const parser = list({ onReadEntry: (e) => out.push({ path: e.path, mode: e.mode ?? -1, mtime: e.mtime?.getTime() ?? -1, uid: e.uid ?? -1, type: e.type }) });
  await new Promise<void>((resolve, reject) => {
    parser.on('end', () => resolve());
    parser.on('error', reject);
    parser.end(archive);
  });
  return out;
}

test('packs the folder sorted, with fixed modes, no times or owners, and the same id every time', async () => {
  const dir = suiteFolder({ 'b.txt': 'b', 'scripts/run.sh': '#!/bin/sh\n' });
  chmodSync(path.join(dir, 'scripts/run.sh'), 0o700);
  const first = await packSuite(dir);
  assert.match(first.id, SUITE_ID);
  assert.equal(first.size, first.archive.length);
  const entries = await entriesOf(first.archive);
  assert.deepEqual(entries.map((e) => e.path), ['b.txt', 'runset.config.yaml', 'scripts/', 'scripts/run.sh', 'tests/', 'tests/a.spec.ts']);
  assert.equal(first.files, 6);
  const modes = Object.fromEntries(entries.map((e) => [e.path, e.mode]));
  assert.equal(modes['scripts/run.sh'], 0o755, 'the executable bit is kept');
  assert.equal(modes['b.txt'], 0o644);
  assert.equal(modes['tests/'], 0o755);
  assert.ok(entries.every((e) => e.mtime === 0 && e.uid === 0), 'no mtimes, no owners');
  assert.equal(first.archive[9], 3, 'the gzip header names Unix, not the packing machine');
  assert.equal(first.archive.readUInt32LE(4), 0, 'the gzip header has no timestamp');

  const again = await packSuite(dir);
  assert.equal(again.id, first.id, 'packing twice gives the same id');
  const later = new Date(Date.now() + 3_600_000);
  for (const name of ['b.txt', 'tests/a.spec.ts', 'tests', '.']) utimesSync(path.join(dir, name), later, later);
  assert.equal((await packSuite(dir)).id, first.id, 'touching mtimes changes nothing');
  writeFileSync(path.join(dir, 'b.txt'), 'B');
  assert.notEqual((await packSuite(dir)).id, first.id, 'changed content is another version');
});

test('the same content in another folder, made in another order, is the same version', async () => {
  const a = suiteFolder({ 'x/1': '1', 'x/2': '2' });
  const b = suiteFolder({ 'x/2': '2', 'x/1': '1' });
  assert.equal((await packSuite(a)).id, (await packSuite(b)).id);
});

test('.gitignore (root and nested) and .runsetignore are respected; node_modules and .git never packed', async () => {
  const dir = suiteFolder({
    '.gitignore': 'dist/\n*.log\n!keep.log\n',
    '.runsetignore': 'videos\n',
    'dist/out.js': 'x',
    'a.log': 'x',
    'keep.log': 'x',
    'videos/v.mp4': 'x',
    'sub/.gitignore': 'local.txt\n',
    'sub/local.txt': 'x',
    'sub/kept.txt': 'x',
    'node_modules/pkg/index.js': 'x',
    'sub/node_modules/pkg/index.js': 'x',
    '.git/HEAD': 'ref',
    [LISTING_FILE]: 'stale',
  });
  const paths = (await entriesOf((await packSuite(dir)).archive)).map((e) => e.path);
  assert.deepEqual(paths, ['.gitignore', '.runsetignore', 'keep.log', 'runset.config.yaml', 'sub/', 'sub/.gitignore', 'sub/kept.txt', 'tests/', 'tests/a.spec.ts', '.runset/'].sort());
});

test('the listing goes in at LISTING_FILE and inspection reads it back', async () => {
  const dir = suiteFolder();
  const listing = { version: 1 as const, reports: [{ entry: 0, report: { suites: [] } }] };
  const packed = await packSuite(dir, { listing });
  const file = path.join(dir, '..', `${path.basename(dir)}.tgz`);
  writeFileSync(file, packed.archive);
  const seen = await inspectSuiteArchive(file, { id: packed.id, maxBytes: 1_000_000 });
  assert.deepEqual(seen.listing, listing);
  assert.equal(seen.files, packed.files);
  assert.equal(seen.configText, 'tests: []\n');
});

test('a link is refused by name, unless an ignore file leaves it out', async () => {
  const dir = suiteFolder();
  symlinkSync('/etc', path.join(dir, 'etc-link'));
  await assert.rejects(packSuite(dir), (error: Error) => error instanceof SuitePackError && /etc-link is a symbolic link.*copy what it points at.*\.runsetignore/.test(error.message));
  writeFileSync(path.join(dir, '.runsetignore'), 'etc-link\n');
  await packSuite(dir);
});

test('a FIFO is refused by name', async () => {
  const dir = suiteFolder();
  execFileSync('mkfifo', [path.join(dir, 'pipe')]);
  await assert.rejects(packSuite(dir), /pipe is a FIFO/);
});

test('refused before uploading: over the size limit, no config, config ignored', async () => {
  const dir = suiteFolder();
  writeFileSync(path.join(dir, 'big.bin'), randomBytes(200_000));
  await assert.rejects(packSuite(dir, { maxBytes: 10_000 }), /packs to more than 10000 bytes, the size limit.*\.runsetignore/);
  const bare = mkdtempSync(path.join(tmpdir(), 'runset-pack-'));
  await assert.rejects(packSuite(bare), /has no runset\.config\.yaml/);
  const hidden = suiteFolder({ '.runsetignore': 'runset.config.yaml\n' });
  await assert.rejects(packSuite(hidden), /left out by an ignore file/);
});

test('more files than MAX_SUITE_FILES is refused while walking', async () => {
  const dir = suiteFolder();
  mkdirSync(path.join(dir, 'many'));
  for (let i = 0; i < 20_001; i++) writeFileSync(path.join(dir, 'many', String(i)), '');
  await assert.rejects(packSuite(dir), /more than 20000 files and folders/);
});

test('a path longer than ustar holds goes in a pax header and reads back whole', async () => {
  const long = `${'a'.repeat(120)}/${'b'.repeat(150)}.txt`;
  const dir = suiteFolder({ [long]: 'deep' });
  const packed = await packSuite(dir);
  assert.ok((await entriesOf(packed.archive)).some((e) => e.path === long));
  const file = path.join(dir, '..', `${path.basename(dir)}-long.tgz`);
  writeFileSync(file, packed.archive);
  assert.ok((await inspectSuiteArchive(file, { id: packed.id, maxBytes: 1_000_000 })).paths.includes(long));
});
