/**
 * The composition root: the one place that knows every part and wires them —
 * config, store, secrets, executors, workers and the API — and tears them down
 * in reverse order.
 */
import { chmodSync, existsSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino, type Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import { FRAMEWORKS, type Executor, type TestType } from './core/types.js';
import { DEFAULTS, kernelSomaxconn, listenBacklog, urlHost, type ServeOptions, type SuiteCacheSettings } from './config/options.js';
import type { SuiteConfig } from './config/suite.js';
import { loadSuite } from './config/load.js';
import { testUsersFor } from './config/slot-users.js';
import type { Store } from './store/store.js';
import { openStore } from './store/open.js';
import { loadSecretKey, resolveVariables } from './secrets/index.js';
import { ensureKey, KeyAuthenticator } from './auth/keys.js';
import { staleAfterMs, WorkerRegistration } from './scheduler/registration.js';
import { WorkerPool } from './scheduler/pool.js';
import { buildApp } from './api/app.js';
import { SetCreationLimit, SignInLimit } from './api/rate-limit.js';
import { httpExecutor } from './executors/http/index.js';
import { createCommandExecutor } from './executors/command/index.js';
import { credentialValues, type TestProcessPolicy } from './executors/environment.js';
import { SuiteCache, type FetchArchive } from './suites/cache.js';
import { DEFAULT_SUITE_CACHE_BYTES, defaultSuiteCacheDir } from './config/suite-cache.js';
import type { RunAsUser } from './executors/run-as.js';
import { describeContainment, detectContainment, type Containment } from './executors/containment.js';
import { createPlaywrightExecutor } from './executors/playwright/index.js';
import { createFrameworkExecutor } from './executors/frameworks/index.js';
import { FileBlobStore, type ArtifactBlobStore, type SuiteArchiveStore } from './artifacts/blobs.js';
import { DEFAULT_MAX_SUITE_BYTES } from './core/suites.js';
import { artifactSaver } from './artifacts/save.js';
import { storeLink } from './worker-link/store-link.js';
import { attachedReaper } from './worker-link/reaper.js';
import { DEFAULT_ARTIFACT_RETENTION, startRetentionSweep } from './retention/artifacts.js';
import { parseDuration } from './core/duration.js';
import { startSetRetention } from './retention/sets.js';
import { startDeadlineSweep } from './sets/deadlines.js';
import { outboundPost, WebhookDispatcher } from './webhooks/dispatcher.js';
import { DEFAULT_RETRY } from './webhooks/retry.js';
import { CodeHostReports, outboundRequest } from './webhooks/code-hosts/index.js';

/**
 * How long after the last worker protocol request an API process keeps reaping:
 * longer than any lease a claim may ask for (MAX lease 1 h), so the members of
 * the last HTTP worker to die still go back.
 */
const HTTP_WORKERS_ATTACHED_MS = 2 * 60 * 60 * 1000;

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

export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.token', 'token'], censor: '[redacted]' },
  });
}

/** An executor for every test type, its test processes following `policy`. */
export function executorRegistry(options: { chromium?: string; policy?: TestProcessPolicy } = {}): ReadonlyMap<TestType, Executor> {
  const list: Executor[] = [
    httpExecutor,
    createCommandExecutor(options.policy),
    createPlaywrightExecutor({ chromium: options.chromium, policy: options.policy }),
    ...FRAMEWORKS.map((type) => createFrameworkExecutor(type, { policy: options.policy }) as Executor),
  ];
  return new Map(list.map((e) => [e.type, e]));
}

/** Whom tests run as, and every credential this process was given, which no test process may see. */
export function testProcessPolicy(options: Partial<Pick<ServeOptions, 'runAs' | 'databaseUrl' | 'secretKey' | 'bootstrapKey' | 'apiKey'>>, containment?: Containment): TestProcessPolicy {
  return { runAs: options.runAs, credentials: credentialValues([options.databaseUrl, options.secretKey, options.bootstrapKey, options.apiKey]), containment };
}

/** How this worker process contains its tests (detected once, at start), said in its start log. */
export function testContainment(logger: Logger, runAs: RunAsUser | undefined): Containment {
  const containment = detectContainment(runAs);
  logger.info({ containment: containment.kind }, `tests are contained by ${describeContainment(containment)}`);
  return containment;
}

/**
 * Where test runs get their folders. Under --run-as the data dir (the SQLite
 * store, secret.key, artifacts) becomes root's alone, and runs get their folders
 * in a fresh one under the temp dir that other users may pass through but not
 * list: each run's own folder is then handed to the test user (0700).
 */
export function testWorkRoot(options: { dataDir?: string; runAs?: RunAsUser }): { dir: string; remove: () => Promise<void> } {
  if (!options.runAs) return { dir: options.dataDir ? path.join(options.dataDir, 'work') : path.join(tmpdir(), 'runset-work'), remove: () => Promise.resolve() };
  if (options.dataDir && existsSync(options.dataDir)) chmodSync(options.dataDir, 0o700);
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-work-'));
  chmodSync(dir, 0o711);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * The suite cache of a worker process: versions of the sets it runs, fetched
 * through its link, npm run under the test processes' policy.
 */
export function suiteCacheFor(settings: SuiteCacheSettings | undefined, policy: TestProcessPolicy, fetchArchive: FetchArchive, logger: Logger): SuiteCache {
  const { dir, maxBytes } = settings ?? { dir: defaultSuiteCacheDir(policy.runAs), maxBytes: DEFAULT_SUITE_CACHE_BYTES };
  return new SuiteCache({ dir, maxBytes, fetchArchive, policy, log: (message, detail) => logger.info(detail ?? {}, message) });
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
  return store.suites.archives?.(maxBytes) ?? new FileBlobStore(path.join(dataDir, 'suites'), maxBytes, 'suite archive');
}

export async function start(options: ServeOptions, logger = createLogger(options.logLevel)): Promise<Runtime> {
  // Sets are planned where the API runs: only there are Playwright suites listed into their cases.
  const loadOptions = { discover: options.api, skipTypes: options.skipTestTypes };
  let suite: SuiteConfig = await loadSuite(options.configPath, loadOptions);
  const opened = await openStore(options, true);
  const teardown: Array<() => Promise<void>> = [() => opened.close()];
  let grace = options.graceMs;
  const closeAll = async () => {
    for (const step of teardown.reverse()) await step();
  };
  try {
    // Metrics load only when asked for; without them the store is used as it is and no hook is installed.
    const observed = options.metricsPort === undefined ? undefined : (await import('./metrics/index.js')).observeProcess(opened, staleAfterMs(options.pollMs));
    const store = observed?.store ?? opened;
    const secretKey = loadSecretKey(options.dataDir, options.secretKey);
    if (options.bootstrapKey) await ensureKey(store, options.bootstrapKey, 'bootstrap');
    const blobs = artifactBlobsFor(store, options.dataDir);
    const suiteArchives = suiteArchivesFor(store, options.dataDir, options.maxSuiteBytes);
    const retentionMs = options.artifactRetentionMs ?? parseDuration(DEFAULT_ARTIFACT_RETENTION);
    teardown.push(startRetentionSweep({ store, blobs, retentionMs, logger: logger.child({ component: 'artifacts' }) }));

    let pool: WorkerPool | undefined;
    if (options.workers > 0) {
      const work = testWorkRoot(options);
      teardown.push(work.remove);
      const workerLogger = logger.child({ component: 'worker' });
      const link = storeLink({ store, blobs, suiteArchives, workerStaleMs: staleAfterMs(options.pollMs), logger: workerLogger });
      teardown.push(() => link.flush());
      const policy = testProcessPolicy(options, testContainment(workerLogger, options.runAs));
      pool = new WorkerPool({
        link,
        reap: () => store.claims.reapExpired(options.maxLostLeases),
        executors: executorRegistry({ chromium: options.chromium, policy }),
        suites: suiteCacheFor(options.suiteCache, policy, (id, signal) => link.suiteArchive(id, signal), workerLogger),
        resolveVariables: (vars) => resolveVariables(vars, { env: process.env, key: secretKey }),
        // Read when a member runs, so turning allowPrivateTargets off takes effect at once.
        outboundPolicy: (env) => ({ allowPrivateTargets: suite.environments.get(env)?.allowPrivateTargets ?? false }),
        logger: workerLogger,
        concurrency: options.workers,
        leaseMs: options.leaseMs,
        pollMs: options.pollMs,
        artifacts: artifactSaver(link.artifacts, { readableBy: policy.runAs }),
        workDir: work.dir,
        maxShareMs: options.maxShareMs,
        peers: (setId, batchKey) => link.batchWorkers(setId, batchKey),
        metrics: observed?.metrics,
        testUsers: testUsersFor(policy.runAs, options.workers),
      });
      const registration = new WorkerRegistration(link, { id: pool.workerId, slots: options.workers }, options.pollMs, workerLogger);
      await registration.start();
      teardown.push(() => registration.stop());
      pool.start();
      const started = pool;
      teardown.push(() => started.stop(grace));
      observed?.metrics.watchSlots(options.workers, () => started.busySlots);
    }

    let app: FastifyInstance | undefined;
    let apiUrl: string | undefined;
    const auth = new KeyAuthenticator(store);
    teardown.push(() => auth.close());
    if (options.api) {
      // A pool here reaps already; otherwise this process reaps for the workers over HTTP it serves.
      const reaper = pool ? undefined : attachedReaper({
        reap: () => store.claims.reapExpired(options.maxLostLeases),
        periodMs: options.pollMs,
        attachedMs: HTTP_WORKERS_ATTACHED_MS,
        logger: logger.child({ component: 'reaper' }),
      });
      if (reaper) teardown.push(() => reaper.stop());
      app = await buildApp({
        store,
        suite: () => suite,
        auth,
        secretKey,
        logger, setLimit: new SetCreationLimit(options.setsPerMinute),
        signInLimit: options.signInsPerMinute ? new SignInLimit(options.signInsPerMinute) : undefined,
        artifacts: blobs,
        suiteArchives,
        workerStaleMs: staleAfterMs(options.pollMs),
        onWorkerRequest: reaper && (() => reaper.seen()),
        onResponse: observed?.onResponse,
        publicUrl: options.publicUrl,
      });
      const listening = app;
      teardown.push(() => listening.close());
      const { backlog, capped } = listenBacklog(options.backlog ?? DEFAULTS.backlog, kernelSomaxconn());
      if (capped) logger.warn({ asked: options.backlog, backlog }, "listen backlog capped by the kernel's net.core.somaxconn: raise it (sysctl) to queue more connections");
      await app.listen({ port: options.port, host: options.host, backlog });
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      const host = urlHost(options.host);
      apiUrl = `http://${host}:${port}/api`;
      const dashboard = options.publicUrl ?? `http://${host}:${port}`;
      const setUrl = (setId: string) => `${dashboard}/sets/${setId}`;
      const webhooks = new WebhookDispatcher({
        store,
        webhooks: () => suite.webhooks,
        codeHosts: new CodeHostReports({ store, config: () => suite.codeHosts, request: outboundRequest(), setUrl }),
        setUrl,
        logger: logger.child({ component: 'webhooks' }),
        post: outboundPost(),
        retry: { ...DEFAULT_RETRY, firstDelayMs: options.webhookRetryMs ?? DEFAULT_RETRY.firstDelayMs },
      });
      webhooks.start();
      teardown.push(() => webhooks.stop());
      // API processes cancel sets past their deadline (any number of them may: a second cancel changes nothing).
      teardown.push(startDeadlineSweep({ store, logger: logger.child({ component: 'deadlines' }) }));
      // API processes sweep old sets (any number of them may, see src/store/postgres/retention.ts); workers only run tests.
      teardown.push(await startSetRetention({ store, blobs, suiteArchives, givenMs: options.retentionMs, logger: logger.child({ component: 'retention' }) }));
    }
    let metricsUrl: string | undefined;
    if (observed && options.metricsPort !== undefined) {
      const listener = await observed.listen({ host: options.host, port: options.metricsPort });
      teardown.push(() => listener.close());
      metricsUrl = listener.url;
    }
    logger.info({ api: apiUrl ?? 'off', metrics: metricsUrl ?? 'off', workers: options.workers, store: store.kind, config: suite.file }, 'runset started');

    let closing: Promise<void> | undefined;
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
        closing ??= closeAll();
        return closing;
      },
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
