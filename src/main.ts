/**
 * The composition root: the one place that knows every part and wires them.
 * A process is a list of steps (src/roles/steps.ts) that its options choose —
 * the store, then the worker role (src/roles/worker.ts) when it has slots, the
 * API role (src/roles/api.ts) when it serves — started in order and torn down
 * in reverse. A role's modules load only in a process that runs it: a
 * `runset worker` never loads the API (Fastify and its routes), nor
 * `serve --no-workers` the executors.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import type { ServeOptions } from './config/options.js';
import type { SuiteConfig } from './config/suite.js';
import { loadSuite } from './config/load.js';
import type { Store } from './store/store.js';
import { openStore } from './store/open.js';
import { loadSecretKey, resolveVariables } from './secrets/index.js';
import { ensureKey, KeyAuthenticator } from './auth/keys.js';
import { staleAfterMs } from './scheduler/registration.js';
import type { WorkerPool } from './scheduler/pool.js';
import { FileBlobStore, type ArtifactBlobStore, type SuiteArchiveStore } from './artifacts/blobs.js';
import { DEFAULT_MAX_SUITE_BYTES } from './core/suites.js';
import { DEFAULT_ARTIFACT_RETENTION, startRetentionSweep } from './retention/artifacts.js';
import { parseDuration } from './core/duration.js';
import type { ProcessMetrics } from './metrics/index.js';
import { setUp, sweep, type Step } from './roles/steps.js';
import { createLogger } from './roles/logger.js';

export interface Runtime {
  store: Store;
  logger: Logger;
  app: FastifyInstance | undefined;
  pool: WorkerPool | undefined;
  /** The API's base address (ends in /api) when this process serves it. */
  apiUrl: string | undefined;
  /** Where Prometheus scrapes this process (--metrics-port), when it serves metrics. */
  metricsUrl: string | undefined;
  reloadConfig(): void;
  /** Graceful stop: stop claiming, finish or release in-flight runs within `graceMs`, close everything. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Where artifact bytes go: into PostgreSQL when the store is PostgreSQL (the API
 * process serving a trace is rarely the worker that wrote it), else files under
 * the data dir.
 */
export function artifactBlobsFor(store: Store, dataDir: string): ArtifactBlobStore {
  return store.artifacts.blobs?.() ?? new FileBlobStore(path.join(dataDir, 'artifacts'));
}

/**
 * Where suite versions' archives go: into PostgreSQL when the store is
 * PostgreSQL (any API process serves what another stored), else files under
 * `<data dir>/suites/`. Apart from artifacts' bytes either way: the artifact
 * orphan sweep never reaches them.
 */
export function suiteArchivesFor(store: Store, dataDir: string, maxBytes = DEFAULT_MAX_SUITE_BYTES): SuiteArchiveStore {
  return store.suiteVersions.archives?.(maxBytes) ?? new FileBlobStore(path.join(dataDir, 'suites'), maxBytes, 'suite archive');
}

/** What the first steps of every process set up, for the roles after them and the runtime. */
interface ProcessParts {
  store: Store;
  /** The process's metrics; absent when they are off (then the store is used as it is and no hook is installed). */
  observed: ProcessMetrics | undefined;
  secretKey: Buffer;
  blobs: ArtifactBlobStore;
  suiteArchives: SuiteArchiveStore;
  auth: KeyAuthenticator;
}

/** What a process serves once started, for its runtime. */
interface Serving {
  pool?: WorkerPool;
  app?: FastifyInstance;
  apiUrl?: string;
  metricsUrl?: string;
}

/** Every process's first steps: the store, its metrics (when asked for), the secret key, the blob stores, the artifact sweep. */
function storeSteps(options: ServeOptions, logger: Logger, parts: Partial<ProcessParts>): Step[] {
  let opened: Store | undefined;
  return [
    { name: 'store', setup: async () => void (opened = await openStore(options, true)), teardown: () => opened?.close() },
    {
      name: 'metrics, secret key, blob stores',
      setup: async () => {
        // Metrics load only when asked for.
        parts.observed = options.metricsPort === undefined ? undefined : (await import('./metrics/index.js')).observeProcess(opened!, staleAfterMs(options.pollMs));
        const store = (parts.store = parts.observed?.store ?? opened!);
        parts.secretKey = loadSecretKey(options.dataDir, options.secretKey);
        if (options.bootstrapKey) await ensureKey(store, options.bootstrapKey, 'bootstrap');
        parts.blobs = artifactBlobsFor(store, options.dataDir);
        parts.suiteArchives = suiteArchivesFor(store, options.dataDir, options.maxSuiteBytes);
      },
    },
    sweep('artifact retention', () =>
      startRetentionSweep({
        store: parts.store!,
        blobs: parts.blobs!,
        retentionMs: options.artifactRetentionMs ?? parseDuration(DEFAULT_ARTIFACT_RETENTION),
        logger: logger.child({ component: 'artifacts' }),
      })),
  ];
}

/** The worker role over a link to the store this process holds. */
async function directWorkerSteps(options: ServeOptions, logger: Logger, parts: ProcessParts, suite: () => SuiteConfig, grace: () => number, serving: Serving): Promise<readonly Step[]> {
  const [{ storeLink }, { workerSteps }] = await Promise.all([import('./worker-link/store-link.js'), import('./roles/worker.js')]);
  const { store, observed, secretKey } = parts;
  const workerLogger = logger.child({ component: 'worker' });
  const link = storeLink({ store, blobs: parts.blobs, suiteArchives: parts.suiteArchives, workerStaleMs: staleAfterMs(options.pollMs), logger: workerLogger });
  return workerSteps({
    link,
    releaseLink: () => link.flush(),
    logger: workerLogger,
    workers: options.workers,
    leaseMs: options.leaseMs,
    pollMs: options.pollMs,
    heartbeatMs: options.pollMs,
    maxShareMs: options.maxShareMs,
    chromium: options.chromium,
    runAs: options.runAs,
    dataDir: options.dataDir,
    suiteCache: options.suiteCache,
    credentials: options,
    reap: () => store.claims.reapExpired(options.maxLostLeases),
    resolveVariables: (vars) => resolveVariables(vars, { env: process.env, key: secretKey }),
    // Read when a member runs, so turning allowPrivateTargets off takes effect at once.
    outboundPolicy: (env) => ({ allowPrivateTargets: suite().environments.get(env)?.allowPrivateTargets ?? false }),
    metrics: observed?.metrics,
    graceMs: grace,
    onStarted: (pool) => {
      serving.pool = pool;
      observed?.metrics.watchSlots(options.workers, () => pool.busySlots);
    },
  });
}

/** The metrics' own listener (--metrics-port), apart from the API. */
function metricsListenerStep(options: ServeOptions, parts: Partial<ProcessParts>, serving: Serving): Step {
  let close: (() => Promise<void>) | undefined;
  return {
    name: 'metrics listener',
    setup: async () => {
      if (!parts.observed || options.metricsPort === undefined) return;
      const listener = await parts.observed.listen({ host: options.host, port: options.metricsPort });
      close = () => listener.close();
      serving.metricsUrl = listener.url;
    },
    teardown: () => close?.(),
  };
}

export async function start(options: ServeOptions, logger = createLogger(options.logLevel)): Promise<Runtime> {
  // Sets are planned where the API runs: only there are Playwright suites listed into their cases.
  const loadOptions = { discover: options.api, skipTypes: options.skipTestTypes };
  let suite: SuiteConfig = await loadSuite(options.configPath, loadOptions);
  let grace = options.graceMs;
  const parts: Partial<ProcessParts> = {};
  const serving: Serving = {};
  // A function in the list is called once the steps before it have set up what it is built from.
  const ready = () => parts as ProcessParts;
  const tearDown = await setUp([
    ...storeSteps(options, logger, parts),
    () => (options.workers > 0 ? directWorkerSteps(options, logger, ready(), () => suite, () => grace, serving) : []),
    { name: 'key authenticator', setup: () => void (parts.auth = new KeyAuthenticator(parts.store!)), teardown: () => parts.auth?.close() },
    async () =>
      options.api
        ? (await import('./roles/api.js')).apiSteps({
          ...ready(),
          options,
          suite: () => suite,
          logger,
          workersReap: serving.pool !== undefined,
          onResponse: parts.observed?.onResponse,
          onListening: (app, apiUrl) => Object.assign(serving, { app, apiUrl }),
        })
        : [],
    metricsListenerStep(options, parts, serving),
  ]);
  const { store } = ready();
  const { pool, app, apiUrl, metricsUrl } = serving;
  logger.info({ api: apiUrl ?? 'off', metrics: metricsUrl ?? 'off', workers: options.workers, store: store.kind, config: suite.file }, 'runset started');

  let reloads = 0;
  return {
    store,
    logger,
    app,
    pool,
    apiUrl,
    metricsUrl,
    reloadConfig() {
      // Listing Playwright suites takes a moment: the old config serves until the new one is ready.
      const generation = ++reloads;
      loadSuite(options.configPath, loadOptions).then(
        (next) => {
          if (generation !== reloads) return; // a later reload superseded this one
          suite = next;
          logger.info({ config: suite.file, tests: suite.tests.length }, 'config reloaded');
        },
        (err: unknown) => logger.error({ err: (err as Error).message }, 'config reload failed; keeping the previous config'),
      );
    },
    close(graceMs = options.graceMs) {
      // Reverse order of start: stop taking requests, drain the workers, then the store.
      grace = graceMs;
      return tearDown();
    },
  };
}
