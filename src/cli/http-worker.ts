/**
 * `runset worker --url URL`: worker slots that reach the service over HTTP
 * (the worker protocol, src/worker-link/http-link.ts) instead of a database.
 * The process holds an API key (RUNSET_API_KEY, role worker) and nothing else
 * of the service's: no database URL, no secret key, no config file. What a
 * member needs comes with its claim (spec, variables opened by the API, the
 * outbound rule); Playwright suites and commands run from this machine's own
 * checkout, as the spec's `dir` and `cwd` name them.
 *
 * Composition only: the worker role (src/roles/worker.ts) over an HTTP link,
 * as src/main.ts assembles it over a store link.
 */
import { createLogger } from '../roles/logger.js';
import type { SuiteCacheSettings } from '../config/options.js';
import type { RunAsUser } from '../executors/run-as.js';
import { resolveVariables } from '../secrets/index.js';
import type { WorkerPool } from '../scheduler/pool.js';
import { setUp } from '../roles/steps.js';
import { workerSteps } from '../roles/worker.js';
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
  let grace = opts.graceMs;
  let pool: WorkerPool | undefined;
  let containment = 'process-group';
  const tearDown = await setUp(workerSteps({
    link,
    releaseLink: () => link.close(),
    logger,
    workers: opts.workers,
    leaseMs: opts.leaseMs,
    pollMs: opts.pollMs ?? settings.heartbeatMs,
    heartbeatMs: settings.heartbeatMs,
    maxShareMs: opts.maxShareMs,
    chromium: opts.chromium,
    runAs: opts.runAs,
    suiteCache: opts.suiteCache,
    // The key is this process's one credential: kept out of every test's environment (and npm's), as a direct worker's are.
    credentials: { apiKey: opts.key },
    // Secret values arrive opened by the API; no environment of this process is ever read for a variable.
    resolveVariables: (vars) => resolveVariables(vars, { env: {}, key: undefined }),
    outboundPolicy: (env) => link.outboundPolicy(env),
    graceMs: () => grace,
    onStarted: (started, policy) => {
      pool = started;
      containment = policy.containment?.kind ?? containment;
    },
  }));

  let stopping: Promise<void> | undefined;
  const stop = (graceMs: number): Promise<void> => {
    if (stopping && graceMs === 0) void pool?.stop(0); // a second signal: abort what the graceful stop still waits for
    grace = graceMs;
    stopping ??= (async () => {
      clearInterval(idleTimer);
      await tearDown();
    })();
    return stopping;
  };
  let idleSince = Date.now();
  const idleTimer = setInterval(() => {
    if (pool!.busySlots > 0) idleSince = Date.now();
    else if (opts.exitWhenIdleMs !== undefined && Date.now() - idleSince >= opts.exitWhenIdleMs) {
      logger.info({ idleMs: opts.exitWhenIdleMs }, 'nothing to do for --exit-when-idle: stopping');
      void stop(0).then(() => process.exit(0));
    }
  }, IDLE_CHECK_MS);
  idleTimer.unref();

  stopOnSignals(stop, opts.graceMs, logger);
  process.stderr.write(`runset: worker ${pool!.workerId} with ${opts.workers} slot(s), over HTTP to ${link.url}${opts.setId ? `, set ${opts.setId} only` : ''}; tests contained by ${containment}\n`);
}
