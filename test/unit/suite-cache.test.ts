/**
 * The worker's suite cache (src/suites/cache.ts) with real archives made by
 * node-tar and a real `npm ci`: a version is unpacked only when its bytes hash
 * to its id and hold nothing a suite may not; one unpack serves concurrent
 * callers and racing processes; dependencies install once per lockfile; the
 * least recently used go when the cache is over its size.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, readlink, rm, utimes } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SuiteCache, type SuiteCacheOptions } from '../../src/suites/cache.js';
import { DEFAULT_SUITE_CACHE_BYTES, parseByteSize, parseSuiteCacheOptions } from '../../src/config/suite-cache.js';
import { ArchiveServer, emptyLockedPackage, makeArchive } from '../helpers/suite-archive.js';

const made: string[] = [];
after(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

async function fixture(extra: Partial<SuiteCacheOptions> = {}) {
  const dir = await mkdtemp(path.join(tmpdir(), 'runset-suite-cache-'));
  made.push(dir);
  const server = new ArchiveServer();
  const cache = new SuiteCache({ dir, maxBytes: 1024 * 1024 * 1024, fetchArchive: server.fetchArchive, ...extra });
  return { dir, server, cache };
}

const listed = (dir: string) => readdir(dir).catch(() => [] as string[]);

test('a version is fetched, checked and unpacked into versions/<id>', async () => {
  const { dir, server, cache } = await fixture();
  const v = await makeArchive({ 'runset.config.yaml': 'tests: []\n', 'tests/marker.txt': 'v1' });
  server.add(v);
  const folder = await cache.ensure(v.id);
  assert.equal(folder, path.join(dir, 'versions', v.id));
  assert.equal(await readFile(path.join(folder, 'tests/marker.txt'), 'utf8'), 'v1');
  assert.equal(await cache.ensure(v.id), folder, 'the second time from the cache');
  assert.equal(server.fetched.length, 1);
  assert.deepEqual(await listed(path.join(dir, 'tmp')), [], 'no work left behind');
});

test('bytes that do not hash to the id are refused and nothing is cached', async () => {
  const { dir, server, cache } = await fixture();
  const v = await makeArchive({ 'runset.config.yaml': 'tests: []\n' });
  const other = await makeArchive({ 'runset.config.yaml': 'tests: [] # changed\n' });
  server.add(v, other.bytes);
  await assert.rejects(cache.ensure(v.id), (err: Error) => {
    assert.match(err.message, new RegExp(`suite version ${v.id} arrived with other bytes .*SHA-256 is ${other.id}`));
    return true;
  });
  assert.deepEqual(await listed(path.join(dir, 'versions')), []);
  assert.deepEqual(await listed(path.join(dir, 'tmp')), []);
});

test('an archive holding a link is refused, naming the entry, and nothing is cached', async () => {
  const { dir, server, cache } = await fixture();
  const v = await makeArchive({ 'runset.config.yaml': 'tests: []\n' }, { 'escape': '/etc/passwd' });
  server.add(v);
  await assert.rejects(cache.ensure(v.id), /"escape" is a link; a suite holds plain files and folders only/);
  assert.deepEqual(await listed(path.join(dir, 'versions')), []);
  assert.deepEqual(await listed(path.join(dir, 'tmp')), []);
});

test('an id that is no SHA-256 is refused before anything is fetched', async () => {
  const { server, cache } = await fixture();
  await assert.rejects(cache.ensure('../../etc'), /not a suite version id; expected the SHA-256/);
  assert.equal(server.fetched.length, 0);
});

test('concurrent ensure() of one version share one fetch and one unpack', async () => {
  const { server, cache } = await fixture();
  const v = await makeArchive({ 'runset.config.yaml': 'tests: []\n' });
  server.add(v);
  const folders = await Promise.all([cache.ensure(v.id), cache.ensure(v.id), cache.ensure(v.id)]);
  assert.equal(new Set(folders).size, 1);
  assert.equal(server.fetched.length, 1);
});

test('a caller that stops waiting does not stop the others', async () => {
  const { server, cache } = await fixture();
  const v = await makeArchive({ 'runset.config.yaml': 'tests: []\n' });
  server.add(v);
  const stopped = new AbortController();
  const first = cache.ensure(v.id, stopped.signal);
  const second = cache.ensure(v.id);
  stopped.abort(new Error('shutdown'));
  await assert.rejects(first, /shutdown/);
  assert.ok(existsSync(await second));
});

test('two caches on one folder (two processes) racing for one version both use one whole copy', async () => {
  const { dir, server, cache } = await fixture();
  const other = new SuiteCache({ dir, maxBytes: 1024 * 1024 * 1024, fetchArchive: server.fetchArchive });
  const v = await makeArchive({ 'runset.config.yaml': 'tests: []\n', 'a.txt': 'a'.repeat(100_000) });
  server.add(v);
  const [a, b] = await Promise.all([cache.ensure(v.id), other.ensure(v.id)]);
  assert.equal(a, b);
  assert.equal(server.fetched.length, 2, 'each process fetched: one rename won');
  assert.equal((await readFile(path.join(a, 'a.txt'), 'utf8')).length, 100_000);
  assert.deepEqual(await listed(path.join(dir, 'versions')), [v.id]);
  assert.deepEqual(await listed(path.join(dir, 'tmp')), [], 'the loser\'s copy is gone');
});

test('over its size, the least recently used versions go first, never one held', async () => {
  const { dir, server, cache } = await fixture({ maxBytes: 25_000, recentMs: 0 });
  const versions = [];
  for (const n of [1, 2, 3, 4]) {
    const v = await makeArchive({ 'runset.config.yaml': 'tests: []\n', 'data.txt': String(n).repeat(10_000) });
    server.add(v);
    versions.push(v);
  }
  const [v1, v2, v3, v4] = versions as [typeof versions[0], typeof versions[0], typeof versions[0], typeof versions[0]];
  const release = cache.hold(v1.id); // oldest, but held by a run
  for (const [i, v] of [v1, v2, v3].entries()) {
    await utimes(await cache.ensure(v.id), new Date(1000 * (i + 1)), new Date(1000 * (i + 1))); // v1 oldest, then v2, v3
  }
  await cache.settled();
  await cache.ensure(v4.id); // 4 × 10 kB over 25 kB: two must go, v1 is held
  await cache.settled();
  assert.deepEqual((await listed(path.join(dir, 'versions'))).sort(), [v1.id, v4.id].sort(), 'v2 and v3, the least recently used not held, went');
  release();
});

test('npm ci runs once per lockfile: two versions with the same lockfile share its deps folder', async () => {
  const { dir, server, cache } = await fixture();
  const a = await makeArchive({ 'runset.config.yaml': 'tests: []\n', ...emptyLockedPackage(), 'marker.txt': 'a' });
  const b = await makeArchive({ 'runset.config.yaml': 'tests: []\n', ...emptyLockedPackage(), 'marker.txt': 'b' });
  server.add(a);
  server.add(b);
  const [folderA, folderB] = await Promise.all([cache.ensure(a.id), cache.ensure(b.id)]);
  const deps = await listed(path.join(dir, 'deps'));
  assert.equal(deps.length, 1, 'one install for one lockfile');
  for (const folder of [folderA, folderB]) {
    assert.equal(await readlink(path.join(folder, 'node_modules')), path.join('..', '..', 'deps', deps[0]!, 'node_modules'));
    assert.ok(existsSync(path.join(folder, 'node_modules')), 'the link leads to the installed folder');
  }
  assert.deepEqual(await listed(path.join(dir, 'tmp')), []);
});

test('a lockfile out of sync with package.json fails with npm\'s own words, leaving nothing in deps/ or versions/', async () => {
  const { dir, server, cache } = await fixture();
  const files = emptyLockedPackage();
  const pkg = { ...(JSON.parse(files['package.json']!) as object), dependencies: { 'left-pad': '1.3.0' } };
  const v = await makeArchive({ 'runset.config.yaml': 'tests: []\n', ...files, 'package.json': JSON.stringify(pkg) });
  server.add(v);
  await assert.rejects(cache.ensure(v.id), (err: Error) => {
    assert.match(err.message, /^npm ci of the suite's dependencies failed: exited with code \d+: npm (error|ERR!)/);
    assert.match(err.message, /in sync/);
    return true;
  });
  assert.deepEqual(await listed(path.join(dir, 'deps')), []);
  assert.deepEqual(await listed(path.join(dir, 'versions')), []);
  assert.deepEqual(await listed(path.join(dir, 'tmp')), []);
});

test('--suite-cache-size takes bytes or a unit; --suite-cache defaults under XDG_CACHE_HOME, or /var/cache with --run-as', () => {
  assert.equal(parseByteSize('5GB'), 5 * 1024 ** 3);
  assert.equal(parseByteSize('500 mb'), 500 * 1024 ** 2);
  assert.equal(parseByteSize('2097152'), 2 * 1024 ** 2);
  assert.throws(() => parseByteSize('lots'), /--suite-cache-size \(RUNSET_SUITE_CACHE_SIZE\): "lots" is not a size of at least 1MB; expected .* e\.g\. 5GB/);
  assert.throws(() => parseByteSize('10KB'), /at least 1MB/);
  assert.equal(parseSuiteCacheOptions(undefined, undefined, undefined, { XDG_CACHE_HOME: '/x' }).dir, '/x/runset/suites');
  assert.equal(parseSuiteCacheOptions(undefined, undefined, undefined, { HOME: '/home/ci' }).dir, '/home/ci/.cache/runset/suites');
  assert.equal(parseSuiteCacheOptions(undefined, undefined, undefined, {}).maxBytes, DEFAULT_SUITE_CACHE_BYTES);
  const runAs = { name: 't', uid: 1001, gid: 1001, groups: [], home: '/' };
  assert.equal(parseSuiteCacheOptions(undefined, '1GB', runAs).dir, '/var/cache/runset/suites');
});
