/**
 * An API server for the access tests: the real app (buildApp) listening on an
 * ephemeral port, over a real store (a SQLite file, or a fresh PostgreSQL
 * schema), with keys of every role made straight in the store, and its log
 * captured so tests can check what it holds (and never holds).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/api/app.js';
import { SetCreationLimit, SignInLimit } from '../../src/api/rate-limit.js';
import { createKey, KeyAuthenticator, type KeyGrant } from '../../src/auth/keys.js';
import { parseSuiteConfig } from '../../src/config/suite.js';
import type { ArtifactBlobStore } from '../../src/artifacts/blobs.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import type { Store } from '../../src/store/store.js';
import { dropSchemas, newSchemaName } from '../helpers/postgres.js';
import { api, tempDir, type ApiAnswer } from '../helpers/server.js';

export const ACCESS_CONFIG = `
environments:
  staging: { variables: { GREETING: hello } }
  preview: { variables: { GREETING: hi } }
tests:
  - { name: ok, type: command, run: ["true"] }
`;

/** Bytes for any artifact location: the access tests care who gets them, not what they are. */
const ARTIFACT_BYTES: ArtifactBlobStore = {
  maxBytes: 1024,
  put: () => Promise.reject(new Error('not used')),
  open: () => Promise.resolve(Readable.from([Buffer.from('artifact bytes')])),
  remove: () => Promise.resolve(),
};

export interface AccessServer {
  url: string;
  store: Store;
  app: FastifyInstance;
  /** Every line the server logged. */
  logs: () => string;
  /** A new key with this grant; returns its token. */
  key(grant: KeyGrant, name?: string): Promise<string>;
  call<T = Record<string, unknown>>(token: string | null, method: string, route: string, body?: unknown): Promise<ApiAnswer<T>>;
  close(): Promise<void>;
}

export type StoreKind = 'sqlite' | 'postgres';

async function openStore(kind: StoreKind): Promise<{ store: Store; drop: () => Promise<void> }> {
  if (kind === 'sqlite') {
    const store = new SqliteStore(path.join(tempDir(), 'runset.db'));
    await store.migrate();
    return { store, drop: () => Promise.resolve() };
  }
  const url = process.env.RUNSET_TEST_DATABASE_URL!;
  const schema = newSchemaName('runset_access');
  const store = new PostgresStore({ connectionString: url, schema });
  await store.migrate();
  return { store, drop: () => dropSchemas(url, [schema]) };
}

export async function startAccessServer(kind: StoreKind, opts: { signInsPerMinute?: number } = {}): Promise<AccessServer> {
  const { store, drop } = await openStore(kind);
  let logged = '';
  const logger = pino({ level: 'info' }, { write: (line: string) => void (logged += line) });
  // No lookup cache: a key created, revoked or expired is judged at once.
  const auth = new KeyAuthenticator(store, 0);
  const suite = parseSuiteConfig(ACCESS_CONFIG, path.join(tempDir(), 'runset.config.yaml'));
  const app = await buildApp({
    store,
    suite: () => suite,
    auth,
    secretKey: randomBytes(32),
    logger,
    setLimit: new SetCreationLimit(10_000),
    signInLimit: new SignInLimit(opts.signInsPerMinute ?? 1000),
    workerStaleMs: 60_000,
    artifacts: ARTIFACT_BYTES,
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `${address}/api`;
  return {
    url,
    store,
    app,
    logs: () => logged,
    key: async (grant, name = `key-${randomUUID().slice(0, 8)}`) => (await createKey(store, name, grant)).token,
    call: (token, method, route, body) => api({ url, apiKey: token ?? '' }, method, route, { body, auth: token === null ? null : `Bearer ${token}` }),
    close: async () => {
      await app.close();
      await auth.close();
      await store.close();
      await drop();
    },
  };
}

/** The store kinds to run on here: SQLite always, PostgreSQL when a test database is configured. */
export function storeKinds(): StoreKind[] {
  return process.env.RUNSET_TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}
