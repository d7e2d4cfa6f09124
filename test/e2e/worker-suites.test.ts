/**
 * Suite archives over the worker protocol: GET /api/v0/worker/suites/{id} on the
 * real app (buildApp, listening), fetched by the HTTP worker link as a worker
 * fetches a version: the bytes as stored, streamed, with a worker key; an
 * unknown version or one whose bytes are gone is a clear SuiteArchiveGoneError;
 * other roles are refused; claims over HTTP carry the set's version. On SQLite,
 * and on PostgreSQL when RUNSET_TEST_DATABASE_URL is set.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { SetCreationLimit } from '../../src/api/rate-limit.js';
import { createKey, KeyAuthenticator } from '../../src/auth/keys.js';
import { parseSuiteConfig } from '../../src/config/suite.js';
import { SuiteArchiveGoneError } from '../../src/core/suites.js';
import { suiteArchivesFor } from '../../src/main.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import type { Store } from '../../src/store/store.js';
import { httpLink } from '../../src/worker-link/http-link.js';
import { dropSchemas, newSchemaName } from '../helpers/postgres.js';
import { api, tempDir } from '../helpers/server.js';
import { bytesOf } from '../helpers/streams.js';
import { newSet } from '../store/fixtures.js';
import { newVersion } from '../store/suites-contract.js';

const CONFIG = `
environments:
  staging: { variables: { GREETING: hello } }
tests:
  - { name: ok, type: command, run: ["true"] }
`;
const silent = pino({ level: 'silent' });
const kinds = process.env.RUNSET_TEST_DATABASE_URL ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
const schemas: string[] = [];
after(() => (process.env.RUNSET_TEST_DATABASE_URL ? dropSchemas(process.env.RUNSET_TEST_DATABASE_URL, schemas) : undefined));

async function openStore(kind: 'sqlite' | 'postgres', dataDir: string): Promise<Store> {
  const store =
    kind === 'sqlite'
      ? new SqliteStore(path.join(dataDir, 'runset.db'))
      : new PostgresStore({ connectionString: process.env.RUNSET_TEST_DATABASE_URL!, schema: schemas[schemas.push(newSchemaName('runset_wsuites')) - 1]! });
  await store.migrate();
  return store;
}

for (const kind of kinds) {
  describe(`suite archives over the worker protocol: ${kind}`, () => {
    test('a worker fetches a version\'s archive by id, streamed as stored; gone versions and other roles are refused clearly; claims carry the version', async () => {
      const dataDir = tempDir('runset-wsuites-');
      const store = await openStore(kind, dataDir);
      const archives = suiteArchivesFor(store, dataDir);
      const auth = new KeyAuthenticator(store, 0);
      const suite = parseSuiteConfig(CONFIG, path.join(dataDir, 'runset.config.yaml'));
      const app = await buildApp({
        store, suite: () => suite, auth, secretKey: randomBytes(32), logger: silent,
        setLimit: new SetCreationLimit(1000), workerStaleMs: 60_000, suiteArchives: archives,
      });
      const url = `${await app.listen({ port: 0, host: '127.0.0.1' })}/api`;
      const workerKey = (await createKey(store, 'w', { role: 'worker' })).token;
      const link = httpLink({ url, key: workerKey, logger: silent });
      try {
        // A version stored as an upload stores it: its bytes, then its row.
        const bytes = randomBytes(300 * 1024);
        const id = createHash('sha256').update(bytes).digest('hex');
        const file = path.join(dataDir, 'suite.tgz');
        writeFileSync(file, bytes);
        const { location, size } = await archives.put(id, file);
        await store.suiteVersions.put(newVersion({ id, location, size }));

        const fetched = await bytesOf(await link.suiteArchive(id));
        assert.equal(createHash('sha256').update(fetched).digest('hex'), id, 'the bytes as stored');

        const unknown = createHash('sha256').update('nothing').digest('hex');
        await assert.rejects(link.suiteArchive(unknown), (err: unknown) =>
          err instanceof SuiteArchiveGoneError && err.id === unknown && /has no such version/.test(err.message));

        // Only worker (and admin) keys; a malformed id is a 400, not a lookup.
        const readKey = (await createKey(store, 'r', { role: 'read' })).token;
        assert.equal((await api({ url, apiKey: readKey }, 'GET', `/v0/worker/suites/${id}`)).status, 403);
        assert.equal((await api({ url, apiKey: workerKey }, 'GET', '/v0/worker/suites/not-a-hash')).status, 400);

        // Claims over HTTP say which version their set runs; a set of the server's own tests says none.
        await store.sets.create(newSet(1));
        await store.sets.create({ ...newSet(1), suiteVersion: id });
        const claimed = await link.claimRuns({ workerId: 'w1', limit: 2, leaseMs: 30_000 });
        assert.deepEqual(claimed.map((c) => c.suiteVersion ?? null), [null, id]);

        // The row without its bytes (removed behind the store's back): still a clear refusal.
        await archives.remove([location]);
        await assert.rejects(link.suiteArchive(id), (err: unknown) => err instanceof SuiteArchiveGoneError && /archive's bytes are missing/.test(err.message));
      } finally {
        await link.close();
        await app.close();
        await auth.close();
        await store.close();
      }
    });
  });
}
