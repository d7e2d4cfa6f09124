/**
 * The OpenAPI document exactly as GET /api/openapi.json serves it, from an app
 * built in-process (buildApp, Fastify's inject: no listener) over a throwaway
 * SQLite store, torn down before it returns.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { buildApp } from '../api/app.js';
import { SetCreationLimit } from '../api/rate-limit.js';
import { KeyAuthenticator } from '../auth/keys.js';
import { parseSuiteConfig } from '../config/suite.js';
import { openStore } from '../store/open.js';

/** The smallest config the app accepts: the document does not depend on the config. */
const CONFIG = 'environments:\n  local: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n';

export async function servedOpenApiDocument(): Promise<unknown> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'runset-docs-'));
  try {
    const store = await openStore({ databaseUrl: undefined, databaseSchema: 'runset', dataDir });
    const auth = new KeyAuthenticator(store);
    try {
      const suite = parseSuiteConfig(CONFIG, path.join(dataDir, 'runset.config.yaml'));
      const app = await buildApp({ store, suite: () => suite, auth, secretKey: randomBytes(32), logger: pino({ level: 'silent' }), setLimit: new SetCreationLimit(1), workerStaleMs: 3000 });
      try {
        const res = await app.inject({ method: 'GET', url: '/api/openapi.json' });
        if (res.statusCode !== 200) throw new Error(`GET /api/openapi.json answered ${res.statusCode}: ${res.body}`);
        return res.json();
      } finally {
        await app.close();
      }
    } finally {
      await auth.close();
      await store.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
