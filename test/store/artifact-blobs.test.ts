/**
 * Artifact bytes: files under the data dir (SQLite deployments) and chunks in
 * PostgreSQL (many machines), behind one interface; and the retention sweep
 * that removes old artifacts, metadata and bytes together.
 * The PostgreSQL half needs RUNSET_TEST_DATABASE_URL and skips, saying so, without it.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ArtifactTooLargeError, FileBlobStore, type ArtifactBlobStore } from '../../src/artifacts/blobs.js';
import { sweepArtifacts } from '../../src/retention/artifacts.js';
import { artifactSaver } from '../../src/artifacts/save.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { dropSchemas } from '../helpers/postgres.js';
import { tempDir } from '../helpers/server.js';
import { bytesOf } from '../helpers/streams.js';
import { newSet } from './fixtures.js';
import { caseSpec } from './batch-contract.js';

const url = process.env.RUNSET_TEST_DATABASE_URL ?? '';

function file(dir: string, bytes: Buffer): string {
  const target = path.join(dir, `f-${randomUUID()}`);
  writeFileSync(target, bytes);
  return target;
}

function blobContract(name: string, make: (maxBytes: number) => Promise<ArtifactBlobStore>): void {
  test(`${name}: bytes go in and come back, over several chunks and empty; removed ones are gone`, async () => {
    const blobs = await make(8 * 1024 * 1024);
    const dir = tempDir('runset-blobs-');
    const big = randomBytes(2.5 * 1024 * 1024);
    const one = await blobs.put(randomUUID(), file(dir, big));
    const empty = await blobs.put(randomUUID(), file(dir, Buffer.alloc(0)));
    assert.equal(one.size, big.length);
    assert.ok((await bytesOf(await blobs.open(one.location))).equals(big));
    assert.equal((await bytesOf(await blobs.open(empty.location))).length, 0);
    await blobs.remove([one.location, empty.location, one.location]);
    assert.equal(await blobs.open(one.location), undefined);
    assert.equal(await blobs.open('elsewhere:nothing'), undefined, 'a location of another kind is not ours');
  });

  test(`${name}: an artifact over the cap is refused`, async () => {
    const blobs = await make(1024);
    await assert.rejects(blobs.put(randomUUID(), file(tempDir(), randomBytes(2048))), ArtifactTooLargeError);
  });
}

blobContract('files', (maxBytes) => Promise.resolve(new FileBlobStore(path.join(tempDir(), 'artifacts'), maxBytes)));

test('files: a location never reaches outside the artifacts folder', async () => {
  const blobs = new FileBlobStore(path.join(tempDir(), 'artifacts'));
  for (const location of ['file:../../etc/passwd', 'file:ab/../../x', 'file:/etc/passwd', 'file:xx/abcdefgh']) {
    assert.equal(await blobs.open(location), undefined, location);
  }
});

test('retention: old artifacts go, metadata and bytes; recent ones stay', async () => {
  const store = new SqliteStore(path.join(tempDir(), 'runset.db'));
  await store.migrate();
  const blobs = new FileBlobStore(path.join(tempDir(), 'artifacts'));
  const saver = artifactSaver(blobs);
  const set = newSet(1);
  set.runs[0]!.spec = caseSpec('one');
  await store.sets.create(set);
  const [run] = await store.claims.claimRuns({ workerId: 'w', limit: 1, leaseMs: 10_000 });
  const dir = tempDir();
  const saved = await saver.save(
    [{ name: 'screenshot.png', contentType: 'image/png', path: file(dir, randomBytes(100)) }, { name: 'gone.zip', contentType: 'application/zip', path: path.join(dir, 'nope') }],
    [],
    dir,
  );
  assert.deepEqual(saved.notes, ['artifact gone.zip not kept: the file was not written']);
  await store.claims.finishRun({ runId: run!.id, workerId: 'w', claim: run!.claim }, { status: 'FAIL', attempts: 1, error: 'x', output: '', durationMs: 1, artifacts: saved.artifacts });
  const [kept] = await store.artifacts.list(set.id);
  assert.deepEqual(await sweepArtifacts(store, blobs, 60_000), { removed: 0, orphans: 0 }, 'a minute old: kept');
  assert.deepEqual(await sweepArtifacts(store, blobs, 60_000, Date.now() + 120_000), { removed: 1, orphans: 0 });
  assert.equal(await blobs.open(kept!.location), undefined);
  assert.deepEqual(await store.artifacts.list(set.id), []);
  await store.close();
});

describe('artifact bytes in PostgreSQL', { skip: url ? false : 'RUNSET_TEST_DATABASE_URL is not set' }, () => {
  const schemas: string[] = [];
  const stores: PostgresStore[] = [];
  async function pgStore(): Promise<PostgresStore> {
    const schema = `runset_test_${randomBytes(6).toString('hex')}`;
    schemas.push(schema);
    const store = new PostgresStore({ connectionString: url, schema });
    stores.push(store);
    await store.migrate();
    return store;
  }
  after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await dropSchemas(url, schemas);
  });

  blobContract('postgres', async (maxBytes) => (await pgStore()).artifacts.blobs(maxBytes));

  test('postgres: bytes no artifact row ever named are swept once old enough', async () => {
    const store = await pgStore();
    const blobs = store.artifacts.blobs();
    const orphan = await blobs.put(randomUUID(), file(tempDir(), randomBytes(10)));
    assert.equal(await blobs.sweepOrphans(new Date(Date.now() - 60_000)), 0, 'too young to be an orphan');
    assert.ok((await blobs.sweepOrphans(new Date(Date.now() + 60_000))) >= 1);
    assert.equal(await blobs.open(orphan.location), undefined);
    assert.ok(!existsSync(orphan.location));
  });
});
