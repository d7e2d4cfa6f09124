/**
 * The composition root: the one place that knows every part and wires them —
 * config, store, secrets, executors, workers and the API — and tears them down
 * in reverse order.
 */
import path from 'node:path';
import { pino, type Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import type { Executor, TestType } from './core/types.js';
import type { ServeOptions } from './config/options.js';
import { loadSuiteConfig, type SuiteConfig } from './config/suite.js';
import type { Store } from './store/store.js';
import { SqliteStore } from './store/sqlite/index.js';
import { loadSecretKey, resolveVariables } from './secrets/index.js';
import { ensureKey, KeyAuthenticator } from './auth/keys.js';
import { WorkerPool } from './scheduler/pool.js';
import { buildApp } from './api/app.js';
import { httpExecutor } from './executors/http/index.js';
import { commandExecutor } from './executors/command/index.js';

export interface Runtime {
  store: Store;
  logger: Logger;
  app: FastifyInstance | undefined;
  pool: WorkerPool | undefined;
  /** The API's base address (ends in /api) when this process serves it. */
  apiUrl: string | undefined;
  reloadConfig(): void;
  /** Graceful stop: stop claiming, finish or release in-flight runs within `graceMs`, close everything. */
  close(graceMs?: number): Promise<void>;
}

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.token', 'token'], censor: '[redacted]' },
  });
}

export async function openStore(options: Pick<ServeOptions, 'databaseUrl' | 'dataDir'>): Promise<Store> {
  let store: Store;
  if (options.databaseUrl) {
    const { PostgresStore } = await import('./store/postgres/index.js');
    store = new PostgresStore({ connectionString: options.databaseUrl });
  } else {
    store = new SqliteStore(path.join(options.dataDir, 'runset.db'));
  }
  await store.migrate();
  return store;
}

export function executorRegistry(): ReadonlyMap<TestType, Executor> {
  const list: Executor[] = [httpExecutor, commandExecutor];
  return new Map(list.map((e) => [e.type, e]));
}

export async function start(options: ServeOptions, logger = createLogger(options.logLevel)): Promise<Runtime> {
  let suite: SuiteConfig = loadSuiteConfig(options.configPath);
  const store = await openStore(options);
  const teardown: Array<() => Promise<void>> = [() => store.close()];
  let grace = options.graceMs;
  const closeAll = async () => {
    for (const step of teardown.reverse()) await step();
  };
  try {
    const secretKey = loadSecretKey(options.dataDir, options.secretKey);
    if (options.bootstrapKey) await ensureKey(store, options.bootstrapKey, 'bootstrap');

    let pool: WorkerPool | undefined;
    if (options.workers > 0) {
      pool = new WorkerPool({
        store,
        executors: executorRegistry(),
        resolveVariables: (vars) => resolveVariables(vars, { env: process.env, key: secretKey }),
        logger: logger.child({ component: 'worker' }),
        concurrency: options.workers,
        leaseMs: options.leaseMs,
        maxLostLeases: options.maxLostLeases,
        pollMs: options.pollMs,
      });
      pool.start();
      const started = pool;
      teardown.push(() => started.stop(grace));
    }

    let app: FastifyInstance | undefined;
    let apiUrl: string | undefined;
    const auth = new KeyAuthenticator(store);
    teardown.push(() => auth.close());
    if (options.api) {
      app = await buildApp({ store, suite: () => suite, auth, secretKey, logger, setsPerMinute: options.setsPerMinute });
      const listening = app;
      teardown.push(() => listening.close());
      await app.listen({ port: options.port, host: options.host });
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      const host = options.host.includes(':') ? `[${options.host}]` : options.host === '0.0.0.0' ? '127.0.0.1' : options.host;
      apiUrl = `http://${host}:${port}/api`;
    }
    logger.info({ api: apiUrl ?? 'off', workers: options.workers, store: store.kind, config: suite.file }, 'runset started');

    let closing: Promise<void> | undefined;
    return {
      store,
      logger,
      app,
      pool,
      apiUrl,
      reloadConfig() {
        try {
          suite = loadSuiteConfig(options.configPath);
          logger.info({ config: suite.file, tests: suite.tests.length }, 'config reloaded');
        } catch (err) {
          logger.error({ err: (err as Error).message }, 'config reload failed; keeping the previous config');
        }
      },
      close(graceMs = options.graceMs) {
        // Reverse order of start: stop taking requests, drain the workers, then the store.
        grace = graceMs;
        closing ??= closeAll();
        return closing;
      },
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
