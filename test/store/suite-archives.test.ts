/**
 * Suite archives' bytes (src/main.ts suiteArchivesFor): files under
 * `<data dir>/suites/` on SQLite, chunks in PostgreSQL apart from artifacts'
 * (the artifact orphan sweep never takes them); and the retention sweep that
 * removes unused versions with their bytes, and nothing when retention is off.
 * The PostgreSQL half needs RUNSET_TEST_DATABASE_URL and skips, saying so, without it.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { BlobTooLargeError, type SuiteArchiveStore } from '../../src/artifacts/blobs.js';
import { artifactBlobsFor, suiteArchivesFor } from '../../src/main.js';
import { removeUnusedSuiteVersions } from '../../src/retention/suites.js';
import { startSetRetention, startSetRetentionSweep } from '../../src/retention/sets.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import type { Store } from '../../src/store/store.js';
import { dropSchemas, query } from '../helpers/postgres.js';
import { tempDir } from '../helpers/server.js';
import { bytesOf } from '../helpers/streams.js';
import { newSet } from './fixtures.js';
import { newVersion } from './suites-contract.js';

const url = process.env.RUNSET_TEST_DATABASE_URL ?? '';

/** An archive's bytes in a file, and its id (their SHA-256), as an upload has them. */
function archive(size = 1.5 * 1024 * 1024): { id: string; file: string; bytes: Buffer } {
  const bytes = randomBytes(size);
  const id = createHash('sha256').update(bytes).digest('hex');
  const file = path.join(tempDir('runset-archive-'), 'suite.tgz');
  writeFileSync(file, bytes);
  return { id, file, bytes };
}

/** A version stored as an upload stores it: bytes first, then the row. */
async function stored(store: Store, archives: SuiteArchiveStore): Promise<{ id: string; location: string; bytes: Buffer }> {
  const a = archive(4096);
  const { location, size } = await archives.put(a.id, a.file);
  await store.suiteVersions.put(newVersion({ id: a.id, location, size }));
  return { id: a.id, location, bytes: a.bytes };
}

function archivesContract(name: string, open: () => Promise<{ store: Store; dataDir: string }>): void {
  test(`${name}: archives go in (twice is fine: same id, same bytes) and come back; a removed one is gone`, async () => {
    const { store, dataDir } = await open();
    try {
      const archives = suiteArchivesFor(store, dataDir);
      const a = archive();
      const first = await archives.put(a.id, a.file);
      const again = await archives.put(a.id, a.file);
      assert.deepEqual(again, first);
      assert.equal(first.size, a.bytes.length);
      assert.ok((await bytesOf(await archives.open(first.location))).equals(a.bytes));
      await archives.remove([first.location]);
      assert.equal(await archives.open(first.location), undefined);
    } finally {
      await store.close();
    }
  });

  test(`${name}: an archive over --max-suite-size is refused, saying so`, async () => {
    const { store, dataDir } = await open();
    try {
      const archives = suiteArchivesFor(store, dataDir, 1024);
      const a = archive(2048);
      await assert.rejects(archives.put(a.id, a.file), (err: unknown) => err instanceof BlobTooLargeError && /2048 bytes is over the 1024-byte suite archive limit/.test(err.message));
    } finally {
      await store.close();
    }
  });

  test(`${name}: the artifact orphan sweep never takes suite archives`, async () => {
    const { store, dataDir } = await open();
    try {
      const archives = suiteArchivesFor(store, dataDir);
      const a = archive(4096);
      const { location } = await archives.put(a.id, a.file); // bytes with no version row: an upload under way
      await artifactBlobsFor(store, dataDir).sweepOrphans?.(new Date(Date.now() + 3_600_000));
      assert.ok((await bytesOf(await archives.open(location))).equals(a.bytes));
    } finally {
      await store.close();
    }
  });

  test(`${name}: retention removes unused versions with their bytes and keeps used and named ones`, async () => {
    const { store, dataDir } = await open();
    try {
      const archives = suiteArchivesFor(store, dataDir);
      const [unused, named, used] = [await stored(store, archives), await stored(store, archives), await stored(store, archives)];
      await store.suiteVersions.setName('main', named.id);
      await store.sets.create({ ...newSet(1), suiteVersion: used.id });
      await sleep(5);
      const removed = await removeUnusedSuiteVersions(store, archives, 1);
      assert.deepEqual(removed, { versions: 1, ids: [unused.id], orphans: 0 });
      assert.equal(await archives.open(unused.location), undefined, 'its bytes went with it');
      assert.equal(await store.suiteVersions.get(unused.id), undefined);
      for (const kept of [named, used]) assert.ok((await bytesOf(await archives.open(kept.location))).equals(kept.bytes));
    } finally {
      await store.close();
    }
  });

  test(`${name}: the serve sweep removes an unused version and logs it; with retention off nothing goes`, async () => {
    const { store, dataDir } = await open();
    try {
      const archives = suiteArchivesFor(store, dataDir);
      const blobs = artifactBlobsFor(store, dataDir);
      const logs: Array<{ msg?: string; versions?: number }> = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => logs.push(JSON.parse(line) as { msg?: string; versions?: number }) });
      const kept = await stored(store, archives);
      const stopOff = await startSetRetention({ store, blobs, suiteArchives: archives, givenMs: 0, logger });
      await sleep(1300);
      await stopOff();
      assert.ok(await store.suiteVersions.get(kept.id), 'retention off: kept');
      const stop = startSetRetentionSweep({ store, blobs, suiteArchives: archives, retentionMs: 1, logger });
      for (let i = 0; i < 40 && (await store.suiteVersions.get(kept.id)); i++) await sleep(100);
      await stop();
      assert.equal(await store.suiteVersions.get(kept.id), undefined, 'removed by the sweep');
      assert.equal(await archives.open(kept.location), undefined);
      assert.ok(logs.some((l) => l.versions === 1 && /removed 1 suite version/.test(l.msg ?? '')), JSON.stringify(logs));
    } finally {
      await store.close();
    }
  });
}

archivesContract('sqlite (files under <data dir>/suites)', async () => {
  const dataDir = tempDir('runset-suites-');
  const store = new SqliteStore(path.join(dataDir, 'runset.db'), { owner: true });
  await store.migrate();
  return { store, dataDir };
});

test('sqlite: archives are files under <data dir>/suites/, apart from artifacts', async () => {
  const dataDir = tempDir('runset-suites-');
  const store = new SqliteStore(path.join(dataDir, 'runset.db'), { owner: true });
  await store.migrate();
  try {
    const a = archive(100);
    const { location } = await suiteArchivesFor(store, dataDir).put(a.id, a.file);
    assert.equal(location, `file:${a.id.slice(0, 2)}/${a.id}`);
    assert.ok(existsSync(path.join(dataDir, 'suites', a.id.slice(0, 2), a.id)));
    assert.equal(await artifactBlobsFor(store, dataDir).open(location), undefined, 'the artifact store does not see it');
  } finally {
    await store.close();
  }
});

describe('suite archives on PostgreSQL', { skip: url ? false : 'RUNSET_TEST_DATABASE_URL is not set' }, () => {
  const schemas: string[] = [];
  after(() => dropSchemas(url, schemas));
  archivesContract('postgres (chunks in the database)', async () => {
    const schema = `runset_test_${randomBytes(6).toString('hex')}`;
    schemas.push(schema);
    const store = new PostgresStore({ connectionString: url, schema });
    await store.migrate();
    return { store, dataDir: tempDir('runset-suites-') };
  });

  test('postgres: bytes an upload left without a row are swept once past the grace, never a version\'s', async () => {
    const schema = `runset_test_${randomBytes(6).toString('hex')}`;
    schemas.push(schema);
    const store = new PostgresStore({ connectionString: url, schema });
    await store.migrate();
    try {
      const archives = suiteArchivesFor(store, tempDir());
      const kept = await stored(store, archives);
      await store.suiteVersions.setName('main', kept.id);
      const orphan = archive(4096);
      const { location } = await archives.put(orphan.id, orphan.file);
      assert.equal((await removeUnusedSuiteVersions(store, archives, 1)).orphans, 0, 'a fresh upload is left to finish');
      await query(url, `UPDATE "${schema}".suite_chunks SET created_at = now() - interval '2 hours'`);
      assert.deepEqual(await removeUnusedSuiteVersions(store, archives, 1), { versions: 0, ids: [], orphans: 1 });
      assert.equal(await archives.open(location), undefined);
      assert.ok((await bytesOf(await archives.open(kept.location))).equals(kept.bytes));
    } finally {
      await store.close();
    }
  });
});
