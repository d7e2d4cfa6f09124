/**
 * `runset serve` (API + workers) and `runset worker` (workers only, for other
 * machines on a shared PostgreSQL). Every flag has a RUNSET_* variable.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import {
  DEFAULTS, defaultWorkers, LOG_LEVELS, OptionError, parseDurationOption, parseInteger, parseLogLevel, parseMetricsPort, parseRetentionOption, parseSizeOption, resolvePath,
  type ServeOptions,
} from '../config/options.js';
import { DEFAULT_MAX_SUITE_BYTES } from '../core/suites.js';
import { isUuid } from '../core/uuid.js';
import type { Runtime } from '../main.js';
import { DEFAULT_ARTIFACT_RETENTION } from '../retention/artifacts.js';
import { DEFAULT_RETENTION } from '../retention/sets.js';
import { DEFAULT_CHROMIUM } from '../executors/playwright/chromium.js';
import { parseRunAs, readApiKey } from '../config/isolation.js';
import { parseSuiteCacheOptions } from '../config/suite-cache.js';
import { stopOnSignals } from './signals.js';

export interface RawServeFlags {
  config: string;
  port: string;
  host: string;
  dataDir: string;
  /** A string from --workers/RUNSET_WORKERS; false from --no-workers; true when neither was given. */
  workers?: string | boolean;
  databaseUrl?: string;
  databaseSchema: string;
  lease: string;
  grace: string;
  poll?: string;
  setsPerMinute: string;
  signInsPerMinute?: string;
  logLevel: string;
  artifactRetention?: string;
  retention?: string;
  chromium?: string;
  maxShare?: string;
  publicUrl?: string;
  webhookRetry?: string;
  backlog?: string;
  metricsPort?: string;
  runAs?: string;
  poolSize?: string;
  suiteCache?: string;
  suiteCacheSize?: string;
  /** `serve` only. */
  maxSuiteSize?: string;
  /** `worker` only. */
  keyFile?: string;
}

/** The most --max-suite-size may say: a bound, so that a slip (50GB for 50MB) is refused rather than served. */
const MAX_SUITE_SIZE_BYTES = 1024 ** 3;

function commonOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--config <file>', 'suite config file').env('RUNSET_CONFIG').default(DEFAULTS.configPath))
    .addOption(new Option('--data-dir <dir>', 'where the SQLite store and artifacts live').env('RUNSET_DATA_DIR').default(DEFAULTS.dataDir))
    .addOption(new Option('--database-url <url>', 'PostgreSQL URL; without it the SQLite file is used').env('RUNSET_DATABASE_URL'))
    .addOption(new Option('--database-schema <name>', 'PostgreSQL schema for runset\'s tables').env('RUNSET_DATABASE_SCHEMA').default(DEFAULTS.databaseSchema))
    .addOption(new Option('--workers <n>', 'worker slots in this process (default: number of cores)').env('RUNSET_WORKERS'))
    .addOption(new Option('--lease <duration>', 'how long a claim lasts without a heartbeat').env('RUNSET_LEASE').default('30s'))
    .addOption(new Option('--grace <duration>', 'on SIGTERM, how long in-flight runs may finish').env('RUNSET_GRACE').default('30s'))
    .addOption(new Option('--poll <duration>', 'safety poll and lease reaper period (default 1s SQLite, 5s PostgreSQL)').env('RUNSET_POLL'))
    .addOption(new Option('--log-level <level>', LOG_LEVELS.join(', ')).env('RUNSET_LOG_LEVEL').default(DEFAULTS.logLevel))
    .addOption(new Option('--artifact-retention <duration>', 'remove screenshots, traces and videos older than this').env('RUNSET_ARTIFACT_RETENTION').default(DEFAULT_ARTIFACT_RETENTION))
    .addOption(new Option('--chromium <path>', 'the Chromium executable for every Chromium project of Playwright tests (default: what the suite\'s Playwright would launch, else ' + DEFAULT_CHROMIUM + ')').env('RUNSET_CHROMIUM'))
    .addOption(new Option('--max-share <duration>', 'most expected work per slot a worker takes of a Playwright suite at once').env('RUNSET_MAX_SHARE').default(DEFAULTS.maxShare))
    .addOption(new Option('--host <host>', 'address to listen on (the API, and the metrics listener)').env('RUNSET_HOST').default(DEFAULTS.host))
    .addOption(new Option('--metrics-port <n>', 'serve Prometheus metrics at /metrics on this port, apart from the API (default: no metrics)').env('RUNSET_METRICS_PORT'))
    .addOption(new Option('--suite-cache <dir>', 'where workers keep the uploaded suite versions they run and their installed dependencies (default: $XDG_CACHE_HOME/runset/suites, ~/.cache/runset/suites; /var/cache/runset/suites with --run-as)').env('RUNSET_SUITE_CACHE'))
    .addOption(new Option('--suite-cache-size <size>', 'most the suite cache may hold; the least recently used versions and installs go first').env('RUNSET_SUITE_CACHE_SIZE').default('5GB'))
    .addOption(new Option('--run-as <user>', 'run every test process (commands, Playwright, its browsers) as this OS user, so tests cannot read this process\'s environment or memory; runset must run as root').env('RUNSET_RUN_AS'));
}

export function compileServeOptions(flags: RawServeFlags, mode: { api: boolean }): ServeOptions {
  const given = typeof flags.workers === 'string' ? flags.workers : undefined;
  const workers = flags.workers === false ? 0 : (parseInteger('--workers', given, mode.api ? 0 : 1, 256) ?? defaultWorkers());
  const leaseMs = parseDurationOption('--lease (RUNSET_LEASE)', flags.lease, { minMs: 200 });
  const port = parseInteger('--port', flags.port, 0, 65535) ?? DEFAULTS.port;
  const runAs = parseRunAs(flags.runAs);
  // A worker's pool: one connection per slot and one for its heartbeats and reaper (the LISTEN connection is apart).
  const poolSize = parseInteger('--pool-size (RUNSET_POOL_SIZE)', flags.poolSize, 1, 1000) ?? (mode.api ? undefined : workers + 1);
  return Object.freeze({
    configPath: resolvePath(flags.config),
    port,
    host: flags.host,
    dataDir: resolvePath(flags.dataDir),
    workers,
    api: mode.api,
    databaseUrl: flags.databaseUrl || undefined,
    databaseSchema: flags.databaseSchema,
    bootstrapKey: process.env.RUNSET_BOOTSTRAP_KEY || undefined,
    secretKey: process.env.RUNSET_SECRET_KEY || undefined,
    leaseMs,
    maxLostLeases: DEFAULTS.maxLostLeases,
    pollMs: flags.poll ? parseDurationOption('--poll (RUNSET_POLL)', flags.poll, { minMs: 10, example: '1s' }) : flags.databaseUrl ? 5000 : 1000,
    graceMs: parseDurationOption('--grace (RUNSET_GRACE)', flags.grace),
    setsPerMinute: parseInteger('--sets-per-minute', flags.setsPerMinute, 1, 1_000_000) ?? DEFAULTS.setsPerMinute,
    backlog: parseInteger('--backlog (RUNSET_BACKLOG)', flags.backlog, 1, 1_000_000) ?? DEFAULTS.backlog,
    signInsPerMinute: parseInteger('--sign-ins-per-minute', flags.signInsPerMinute, 1, 1_000_000) ?? DEFAULTS.signInsPerMinute,
    logLevel: parseLogLevel('--log-level (RUNSET_LOG_LEVEL)', flags.logLevel),
    chromium: flags.chromium || undefined,
    artifactRetentionMs: parseRetentionOption('--artifact-retention (RUNSET_ARTIFACT_RETENTION)', flags.artifactRetention ?? DEFAULT_ARTIFACT_RETENTION, { minMs: 1, example: '7d' }),
    // Unset (or empty) is not the default: the store chooses (chooseSetRetention).
    retentionMs: flags.retention ? parseRetentionOption('--retention (RUNSET_RETENTION)', flags.retention, { minMs: 0, example: '90d' }) : undefined,
    maxShareMs: parseDurationOption('--max-share (RUNSET_MAX_SHARE)', flags.maxShare ?? DEFAULTS.maxShare, { minMs: 1, maxMs: Number.MAX_SAFE_INTEGER, example: '30s' }),
    publicUrl: flags.publicUrl ? parsePublicUrl(flags.publicUrl) : undefined,
    webhookRetryMs: parseDurationOption('--webhook-retry (RUNSET_WEBHOOK_RETRY)', flags.webhookRetry ?? DEFAULTS.webhookRetry, { minMs: 100, example: '10s' }),
    metricsPort: parseMetricsPort(flags.metricsPort, mode.api ? port : undefined),
    runAs,
    apiKey: mode.api ? undefined : readApiKey(flags.keyFile, process.env.RUNSET_API_KEY, runAs),
    poolSize,
    suiteCache: parseSuiteCacheOptions(flags.suiteCache, flags.suiteCacheSize, runAs),
    maxSuiteBytes: flags.maxSuiteSize === undefined ? undefined : parseSizeOption('--max-suite-size (RUNSET_MAX_SUITE_SIZE)', flags.maxSuiteSize, { minBytes: 1024, maxBytes: MAX_SUITE_SIZE_BYTES, example: '50MB' }),
  });
}

/** The dashboard's address as people open it (links in webhooks), without a trailing slash. */
function parsePublicUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OptionError(`--public-url (RUNSET_PUBLIC_URL) must be an http(s) URL such as https://runset.example.com; got "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OptionError(`--public-url (RUNSET_PUBLIC_URL) must be an http(s) URL; got the scheme ${url.protocol}`);
  return url.href.replace(/\/+$/, '');
}

/** Starts, then stops gracefully on SIGTERM/SIGINT; a second signal stops at once. */
export async function runUntilSignalled(options: ServeOptions, onStarted?: (rt: Runtime) => void | Promise<void>): Promise<void> {
  // The server, its store drivers and the dashboard load only when a server command runs.
  const [{ start }, { ConfigError }, { DataDirLockedError }] = await Promise.all([import('../main.js'), import('../config/suite.js'), import('../store/sqlite-file.js')]);
  let runtime: Runtime;
  try {
    runtime = await start(options);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof OptionError || err instanceof DataDirLockedError) {
      process.stderr.write(`runset: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  stopOnSignals((graceMs) => runtime.close(graceMs), options.graceMs, runtime.logger);
  process.on('SIGHUP', () => runtime.reloadConfig());
  // After the handlers: whoever reads the start line may signal at once, and must get a graceful stop.
  await onStarted?.(runtime);
}

/** Where the metrics are, for the start line (nothing when they are off). */
function metricsNote(rt: Runtime): string {
  return rt.metricsUrl ? `, metrics at ${rt.metricsUrl}` : '';
}

/** The first admin key, printed once as the demo prints its key: on stdout, ready to paste. */
function firstKeyBanner(api: string, token: string): string {
  return `
This store had no key, so runset made its first admin key. It is shown only this once:
  export RUNSET_URL=${api}
  export RUNSET_API_KEY=${token}
Sign in to the dashboard (${api.replace(/\/api$/, '/')}) with it; make narrower keys there or with
\`runset keys create --name ci --role trigger\`, and revoke this one when you no longer need it.

`;
}

export function registerServeCommands(program: Command): void {
  commonOptions(
    program
      .command('serve')
      .description('serve the API with in-process workers (the embedded default)')
      .addOption(new Option('--port <n>', 'port to listen on').env('RUNSET_PORT').default(String(DEFAULTS.port)))
      .addOption(new Option('--no-workers', 'API only: run no workers in this process'))
      .addOption(new Option('--sets-per-minute <n>', 'sets one key may create per minute').env('RUNSET_SETS_PER_MINUTE').default(String(DEFAULTS.setsPerMinute)))
      .addOption(new Option('--sign-ins-per-minute <n>', 'dashboard sign-in attempts one client address may make per minute').env('RUNSET_SIGN_INS_PER_MINUTE').default(String(DEFAULTS.signInsPerMinute)))
      .addOption(new Option('--public-url <url>', 'the dashboard\'s address as people open it, for links in webhooks (default: the listen address)').env('RUNSET_PUBLIC_URL'))
      .addOption(new Option('--retention <duration>', `remove sets that ended longer ago than this, with their members and artifacts, existing history included (0: keep every set). Unset: ${DEFAULT_RETENTION}, but a store upgraded from a runset without retention keeps every set`).env('RUNSET_RETENTION'))
      .addOption(new Option('--webhook-retry <duration>', 'wait after a failed webhook delivery, doubled each time, for 24 h').env('RUNSET_WEBHOOK_RETRY').default(DEFAULTS.webhookRetry))
      .addOption(new Option('--backlog <n>', "connections queued before they are accepted (capped by the kernel's net.core.somaxconn)").env('RUNSET_BACKLOG').default(String(DEFAULTS.backlog)))
      .addOption(new Option('--pool-size <n>', 'most pooled PostgreSQL connections of this process (one LISTEN connection more)').env('RUNSET_POOL_SIZE').default(String(DEFAULTS.poolSize)))
      .addOption(new Option('--max-suite-size <size>', 'largest suite archive an upload may send, e.g. 50MB (units of 1024)').env('RUNSET_MAX_SUITE_SIZE').default(`${DEFAULT_MAX_SUITE_BYTES / 1024 ** 2}MB`)),
  ).action(async (flags: RawServeFlags) => {
    const options = compileServeOptions(flags, { api: true });
    await runUntilSignalled(options, async (rt) => {
      // Made before the start line, so whoever sees the line can use the key.
      const first = await (await import('../auth/keys.js')).createFirstKey(rt.store);
      process.stderr.write(`runset: API at ${rt.apiUrl}, ${options.workers} worker slot(s), ${rt.store.kind} store${metricsNote(rt)}\n`);
      if (first) process.stdout.write(firstKeyBanner(rt.apiUrl ?? '', first.token));
    });
  });

  commonOptions(program.command('worker').description('run workers only, on other machines: over HTTP (--url) or on a shared PostgreSQL'))
    .addOption(new Option('--url <url>', 'the API to work for over HTTP (its base address, e.g. https://runset.example.com/api); the key is read from RUNSET_API_KEY or --key-file. No database URL, secret key or config file then'))
    .addOption(new Option('--set <id>', 'with --url: take only this set\'s members'))
    .addOption(new Option('--exit-when-idle <duration>', 'with --url: exit 0 once nothing has run nor been claimed for this long (CI jobs lending their machine)'))
    .addOption(new Option('--suite-root <dir>', 'with --url: this machine\'s copy of the folder holding the API\'s runset.config.yaml (a CI checkout); default: the same paths as the API').env('RUNSET_SUITE_ROOT'))
    .addOption(new Option('--pool-size <n>', 'on PostgreSQL: most pooled connections of this process (one LISTEN connection more); default: --workers + 1').env('RUNSET_POOL_SIZE'))
    .addOption(new Option('--key-file <path>', 'read the worker\'s API key from this file instead of RUNSET_API_KEY (first line; never printed, never passed to tests)').env('RUNSET_API_KEY_FILE'))
    .action(async (flags: RawServeFlags & HttpWorkerFlags) => {
      if (flags.url !== undefined) return runOverHttp(flags);
      if (flags.set !== undefined || flags.exitWhenIdle !== undefined || flags.suiteRoot !== undefined) throw new OptionError('--set, --exit-when-idle and --suite-root need --url (a worker over HTTP)');
      // A worker listens only for its metrics (--metrics-port), on --host.
      const options = compileServeOptions({ ...flags, port: '0', setsPerMinute: '1' }, { api: false });
      if (!options.databaseUrl) {
        throw new OptionError('runset worker needs a shared PostgreSQL store: set --database-url or RUNSET_DATABASE_URL');
      }
      await runUntilSignalled(options, (rt) => {
        process.stderr.write(`runset: worker ${rt.pool?.workerId} with ${options.workers} slot(s)${metricsNote(rt)}\n`);
      });
    });
}

interface HttpWorkerFlags {
  url?: string;
  suiteRoot?: string;
  set?: string;
  exitWhenIdle?: string;
}

/** `runset worker --url URL`: the options a worker over HTTP takes, checked, then its slots (src/cli/http-worker.ts). */
async function runOverHttp(flags: RawServeFlags & HttpWorkerFlags): Promise<void> {
  if (flags.databaseUrl) throw new OptionError('--url (a worker over HTTP) holds no database: unset --database-url / RUNSET_DATABASE_URL for this process');
  if (flags.metricsPort !== undefined) throw new OptionError('--metrics-port is not available with --url yet: the API process serves the metrics of what its workers report');
  const runAs = parseRunAs(flags.runAs);
  const key = readApiKey(flags.keyFile, process.env.RUNSET_API_KEY, runAs);
  if (!key) throw new OptionError('--url needs an API key of role worker in RUNSET_API_KEY or --key-file (runset keys create --name runners --role worker)');
  if (flags.set !== undefined && !isUuid(flags.set)) throw new OptionError(`--set must be a set id (a uuid), got "${flags.set}"`);
  const given = typeof flags.workers === 'string' ? flags.workers : undefined;
  const { runHttpWorker } = await import('./http-worker.js');
  await runHttpWorker({
    url: apiBase(flags.url!),
    key,
    runAs,
    workers: parseInteger('--workers', given, 1, 256) ?? defaultWorkers(),
    leaseMs: parseDurationOption('--lease (RUNSET_LEASE)', flags.lease, { minMs: 200, maxMs: 3_600_000 }),
    graceMs: parseDurationOption('--grace (RUNSET_GRACE)', flags.grace),
    pollMs: flags.poll ? parseDurationOption('--poll (RUNSET_POLL)', flags.poll, { minMs: 10, example: '1s' }) : undefined,
    chromium: flags.chromium || undefined,
    maxShareMs: parseDurationOption('--max-share (RUNSET_MAX_SHARE)', flags.maxShare ?? DEFAULTS.maxShare, { minMs: 1, maxMs: Number.MAX_SAFE_INTEGER, example: '30s' }),
    logLevel: parseLogLevel('--log-level (RUNSET_LOG_LEVEL)', flags.logLevel),
    setId: flags.set?.toLowerCase(),
    suiteRoot: flags.suiteRoot === undefined ? undefined : suiteRootOption(flags.suiteRoot),
    suiteCache: parseSuiteCacheOptions(flags.suiteCache, flags.suiteCacheSize, runAs),
    exitWhenIdleMs: flags.exitWhenIdle === undefined ? undefined : parseDurationOption('--exit-when-idle', flags.exitWhenIdle, { minMs: 1, example: '10s' }),
  });
}

/** --suite-root: an existing folder, made absolute. */
function suiteRootOption(dir: string): string {
  const absolute = path.resolve(dir);
  if (!existsSync(absolute) || !statSync(absolute).isDirectory()) {
    throw new OptionError(`--suite-root (RUNSET_SUITE_ROOT): ${absolute} is not a folder; expected this machine's copy of the folder holding the API's runset.config.yaml`);
  }
  return absolute;
}

/** The API's base address from --url: an http(s) URL, `/api` added when it does not end so. */
function apiBase(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OptionError(`--url must be the API's http(s) address, such as https://runset.example.com/api; got "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OptionError(`--url must be an http(s) URL; got the scheme ${url.protocol}`);
  const base = url.href.replace(/\/+$/, '');
  return base.endsWith('/api') ? base : `${base}/api`;
}
