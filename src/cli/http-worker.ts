/**
 * `runset worker --url URL`: worker slots that reach the service over HTTP
 * (the worker protocol, src/worker-link/http-link.ts) instead of a database.
 * The process holds an API key (RUNSET_API_KEY, role worker) and nothing else
 * of the service's: no database URL, no secret key, no config file. What a
 * member needs comes with its claim (spec, variables opened by the API, the
 * outbound rule); Playwright suites and commands run from this machine's own
 * checkout, as the spec's `dir` and `cwd` name them.
 *
 * Composition only, as src/main.ts is for the processes that hold a store.
 */
import { createLogger, executorRegistry, suiteCacheFor, testContainment, testProcessPolicy, testWorkRoot } from '../main.js';
import type { SuiteCacheSettings } from '../config/options.js';
import type { RunAsUser } from '../executors/run-as.js';
import { testUsersFor } from '../config/slot-users.js';
import { resolveVariables } from '../secrets/index.js';
import { WorkerPool } from '../scheduler/pool.js';
import { WorkerRegistration } from '../scheduler/registration.js';
import { artifactSaver } from '../artifacts/save.js';
import { httpLink } from '../worker-link/http-link.js';
import { LinkRefusedError, LinkUnavailableError } from '../worker-link/http-request.js';
import { stopOnSignals } from './signals.js';

export interface HttpWorkerOptions {
  /** The API's base address, ending in /api. */
  url: string;
  key: string;
  /** Every test process runs as this OS user (`--run-as`). */
  runAs: RunAsUser | undefined;
  workers: number;
  leaseMs: number;
  graceMs: number;
  /** Safety poll; default: the heartbeat period the service asks for. */
  pollMs: number | undefined;
  chromium: string | undefined;
  maxShareMs: number;
  logLevel: string;
  /** Only this set's members (`--set ID`). */
  setId: string | undefined;
  /** Where this machine holds the suite the API's config names (`--suite-root`). */
  suiteRoot: string | undefined;
  /** Where uploaded suite versions are kept, and its size (`--suite-cache`, `--suite-cache-size`). */
  suiteCache: SuiteCacheSettings;
  /** Exit 0 once nothing has run nor been claimed for this long (`--exit-when-idle`). */
  exitWhenIdleMs: number | undefined;
}

/** How often idleness is looked at. */
const IDLE_CHECK_MS = 200;

export async function runHttpWorker(opts: HttpWorkerOptions): Promise<void> {
  const logger = createLogger(opts.logLevel).child({ component: 'worker' });
  const link = httpLink({ url: opts.url, key: opts.key, logger, setId: opts.setId, suiteRoot: opts.suiteRoot });
  let settings;
  try {
    settings = await link.settings();
  } catch (err) {
    await link.close();
    if (err instanceof LinkRefusedError || err instanceof LinkUnavailableError) {
      process.stderr.write(`runset: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const work = testWorkRoot({ runAs: opts.runAs });
  // The key is this process's one credential: kept out of every test's environment (and npm's), as a direct worker's are.
  const policy = testProcessPolicy({ runAs: opts.runAs, apiKey: opts.key }, testContainment(logger, opts.runAs));
  const pool = new WorkerPool({
    link,
    executors: executorRegistry({ chromium: opts.chromium, policy }),
    suites: suiteCacheFor(opts.suiteCache, policy, (id, signal) => link.suiteArchive(id, signal), logger),
    // Secret values arrive opened by the API; no environment of this process is ever read for a variable.
    resolveVariables: (vars) => resolveVariables(vars, { env: {}, key: undefined }),
    outboundPolicy: (env) => link.outboundPolicy(env),
    logger,
    concurrency: opts.workers,
    leaseMs: opts.leaseMs,
    pollMs: opts.pollMs ?? settings.heartbeatMs,
    artifacts: artifactSaver(link.artifacts, { readableBy: policy.runAs }),
    workDir: work.dir,
    maxShareMs: opts.maxShareMs,
    peers: (setId, batchKey) => link.batchWorkers(setId, batchKey),
    testUsers: testUsersFor(policy.runAs, opts.workers),
  });
  const registration = new WorkerRegistration(link, { id: pool.workerId, slots: opts.workers }, settings.heartbeatMs, logger);
  await registration.start();
  pool.start();

  let stopping: Promise<void> | undefined;
  const stop = (graceMs: number): Promise<void> => {
    if (stopping && graceMs === 0) void pool.stop(0); // a second signal: abort what the graceful stop still waits for
    stopping ??= (async () => {
      clearInterval(idleTimer);
      await pool.stop(graceMs);
      await registration.stop();
      await link.close();
      await work.remove();
    })();
    return stopping;
  };
  let idleSince = Date.now();
  const idleTimer = setInterval(() => {
    if (pool.busySlots > 0) idleSince = Date.now();
    else if (opts.exitWhenIdleMs !== undefined && Date.now() - idleSince >= opts.exitWhenIdleMs) {
      logger.info({ idleMs: opts.exitWhenIdleMs }, 'nothing to do for --exit-when-idle: stopping');
      void stop(0).then(() => process.exit(0));
    }
  }, IDLE_CHECK_MS);
  idleTimer.unref();

  stopOnSignals(stop, opts.graceMs, logger);
  process.stderr.write(`runset: worker ${pool.workerId} with ${opts.workers} slot(s), over HTTP to ${link.url}${opts.setId ? `, set ${opts.setId} only` : ''}; tests contained by ${policy.containment?.kind ?? 'process-group'}\n`);
}
