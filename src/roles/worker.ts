/**
 * The worker role: slots that claim members through a WorkerLink and run them
 * with the executors, assembled once for every process that runs tests — one
 * that holds the store (`serve`, `runset worker` on PostgreSQL: a store link)
 * and one over HTTP (`runset worker --url`: an HTTP link). What differs
 * between them comes in as options: the link, how a variable is opened, the
 * outbound rule, whether it reaps.
 */
import { chmodSync, existsSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { FRAMEWORKS, type Executor, type TestType } from '../core/types.js';
import type { ServeOptions, SuiteCacheSettings } from '../config/options.js';
import { testUsersFor } from '../config/slot-users.js';
import { DEFAULT_SUITE_CACHE_BYTES, defaultSuiteCacheDir } from '../config/suite-cache.js';
import { httpExecutor } from '../executors/http/index.js';
import { createCommandExecutor } from '../executors/command/index.js';
import { createPlaywrightExecutor } from '../executors/playwright/index.js';
import { createFrameworkExecutor } from '../executors/frameworks/index.js';
import { credentialValues, type TestProcessPolicy } from '../executors/environment.js';
import type { RunAsUser } from '../executors/run-as.js';
import { describeContainment, detectContainment, type Containment } from '../executors/containment.js';
import { artifactSaver } from '../artifacts/save.js';
import { SuiteCache, type FetchArchive } from '../suites/cache.js';
import type { WorkerLink } from '../worker-link/link.js';
import { WorkerPool, type WorkerPoolOptions } from '../scheduler/pool.js';
import { WorkerRegistration } from '../scheduler/registration.js';
import type { Step } from './steps.js';

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
export function testContainment(logger: Logger): Containment {
  const containment = detectContainment();
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

export interface WorkerRoleOptions extends Pick<WorkerPoolOptions, 'resolveVariables' | 'outboundPolicy' | 'reap' | 'metrics' | 'leaseMs' | 'pollMs' | 'maxShareMs'> {
  link: WorkerLink;
  /** Undoes the link once the slots are stopped: a store link writes what it still holds, an HTTP link closes. */
  releaseLink(): Promise<void>;
  /** The worker's logger (component worker). */
  logger: Logger;
  /** Slots. */
  workers: number;
  /** How often the worker says it is alive (the workers registry). */
  heartbeatMs: number;
  chromium: string | undefined;
  runAs: RunAsUser | undefined;
  /** The data dir, whose `work/` holds runs' folders (none: the temp dir's). */
  dataDir?: string;
  suiteCache: SuiteCacheSettings | undefined;
  /** Every credential this process holds: no test process may see one. */
  credentials: Partial<Pick<ServeOptions, 'databaseUrl' | 'secretKey' | 'bootstrapKey' | 'apiKey'>>;
  /** How long in-flight runs may finish at stop (asked then: a stop may shorten it). */
  graceMs(): number;
  /** Told of the pool once it claims, and of the policy its test processes follow. */
  onStarted?(pool: WorkerPool, policy: TestProcessPolicy): void;
}

/** The worker role's steps: the link, the runs' folder, the pool registered as a worker, then claiming; torn down the other way. */
export function workerSteps(o: WorkerRoleOptions): Step[] {
  let work: ReturnType<typeof testWorkRoot> | undefined;
  let pool: WorkerPool | undefined;
  let registration: WorkerRegistration | undefined;
  let policy: TestProcessPolicy | undefined;
  return [
    { name: 'worker link', setup: () => undefined, teardown: () => o.releaseLink() },
    { name: 'test work root', setup: () => void (work = testWorkRoot(o)), teardown: () => work?.remove() },
    {
      name: 'worker registration',
      setup: async () => {
        policy = testProcessPolicy({ ...o.credentials, runAs: o.runAs }, testContainment(o.logger));
        pool = new WorkerPool({
          link: o.link,
          reap: o.reap,
          executors: executorRegistry({ chromium: o.chromium, policy }),
          suites: suiteCacheFor(o.suiteCache, policy, (id, signal) => o.link.suiteArchive(id, signal), o.logger),
          resolveVariables: o.resolveVariables,
          outboundPolicy: o.outboundPolicy,
          logger: o.logger,
          concurrency: o.workers,
          leaseMs: o.leaseMs,
          pollMs: o.pollMs,
          artifacts: artifactSaver(o.link.artifacts, { readableBy: policy.runAs }),
          workDir: work?.dir,
          maxShareMs: o.maxShareMs,
          peers: (setId, batchKey) => o.link.batchWorkers(setId, batchKey),
          metrics: o.metrics,
          testUsers: testUsersFor(policy.runAs, o.workers),
        });
        registration = new WorkerRegistration(o.link, { id: pool.workerId, slots: o.workers }, o.heartbeatMs, o.logger);
        await registration.start();
      },
      teardown: () => registration?.stop(),
    },
    {
      name: 'claiming',
      setup: () => {
        pool!.start();
        o.onStarted?.(pool!, policy!);
      },
      teardown: () => pool?.stop(o.graceMs()),
    },
  ];
}
