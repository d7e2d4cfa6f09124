/**
 * The process options of `runset serve` / `runset worker`, compiled once from
 * defaults → environment (RUNSET_*) → flags into one frozen object (commander
 * resolves flag-over-env; this file checks values and applies defaults).
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { TestType } from '../core/types.js';
import { DurationError, parseDuration } from '../core/duration.js';
import type { RunAsUser } from '../executors/run-as.js';

export interface ServeOptions {
  configPath: string;
  port: number;
  host: string;
  dataDir: string;
  /** Worker slots in this process; 0 = API only. */
  workers: number;
  /** API in this process (false for `runset worker`). */
  api: boolean;
  databaseUrl: string | undefined;
  /** PostgreSQL schema holding runset's tables (several deployments can share a database). */
  databaseSchema: string;
  bootstrapKey: string | undefined;
  secretKey: string | undefined;
  leaseMs: number;
  maxLostLeases: number;
  pollMs: number;
  graceMs: number;
  setsPerMinute: number;
  /** Connections the kernel queues before the server accepts them (listen backlog); capped by net.core.somaxconn. */
  backlog?: number;
  /** Sign-in attempts one client address may make per minute; default DEFAULTS.signInsPerMinute. */
  signInsPerMinute?: number;
  logLevel: string;
  /** The Chromium executable Playwright tests use (default /usr/bin/chromium). */
  chromium?: string;
  /** Artifacts older than this are removed (default 7 days). */
  artifactRetentionMs?: number;
  /**
   * Sets that ended longer ago than this are removed, with everything of theirs (0
   * keeps every set). Undefined: none given, and the store decides (the default on
   * a store made with retention, every set kept on one older: src/retention/sets.ts).
   */
  retentionMs?: number;
  /** Most expected work per slot one share of a batch holds (see src/scheduler/shares.ts); default 30 s. */
  maxShareMs?: number;
  /** The dashboard's address as people open it (links in webhooks); default: the listen address. */
  publicUrl?: string;
  /** The wait after a webhook delivery's first failed attempt (doubled after each). */
  webhookRetryMs?: number;
  /** Test types left out of the suite (the demo, when no browser is installed). */
  skipTestTypes?: readonly TestType[];
  /** Serve Prometheus metrics at /metrics on this port (on `host`, apart from the API); undefined: no metrics at all. 0: any free port. */
  metricsPort?: number;
  /** The OS user every test process runs as (--run-as); undefined: this process's own. */
  runAs?: RunAsUser;
  /** The worker's API key (RUNSET_API_KEY or --key-file): a credential, never handed to tests or printed. */
  apiKey?: string;
  /** Most pooled PostgreSQL connections (--pool-size; the LISTEN connection is one more); undefined: the store's default. */
  poolSize?: number;
  /** Where workers keep the suite versions they run, and its size (--suite-cache, --suite-cache-size); undefined: the defaults. */
  suiteCache?: SuiteCacheSettings;
  /** Largest suite archive an upload may send, bytes (--max-suite-size); default DEFAULT_MAX_SUITE_BYTES. */
  maxSuiteBytes?: number;
}

/** A worker's suite cache: its folder and most bytes (src/config/suite-cache.ts parses them). */
export interface SuiteCacheSettings {
  dir: string;
  maxBytes: number;
}

export const DEFAULTS = Object.freeze({
  configPath: 'runset.config.yaml',
  port: 8080,
  host: '127.0.0.1',
  dataDir: '.runset',
  leaseMs: 30_000,
  maxLostLeases: 3,
  graceMs: 30_000,
  setsPerMinute: 120,
  signInsPerMinute: 10,
  logLevel: 'info',
  databaseSchema: 'runset',
  maxShare: '30s',
  webhookRetry: '10s',
  backlog: 4096,
  /** Pooled PostgreSQL connections of an API process (`serve`); a worker's default is its slots + 1. */
  poolSize: 10,
});

/**
 * The backlog to listen with: the one asked for, but never above the kernel's
 * net.core.somaxconn, which would silently cut it (`capped` says so, to log it).
 */
export function listenBacklog(requested: number, somaxconn: number | undefined): { backlog: number; capped: boolean } {
  if (somaxconn === undefined || requested <= somaxconn) return { backlog: requested, capped: false };
  return { backlog: somaxconn, capped: true };
}

/** Linux's net.core.somaxconn, or undefined where there is none to read. */
export function kernelSomaxconn(): number | undefined {
  try {
    const n = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** The host to put in a URL for an address listened on: IPv6 in brackets, and a wildcard as loopback. */
export function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
}

export class OptionError extends Error {}

/** A duration option; an error names the option (with its variable) and what is accepted. */
export function parseDurationOption(
  name: string,
  raw: string,
  limits: { minMs?: number; maxMs?: number; example?: string } = {},
): number {
  let ms: number;
  try {
    ms = parseDuration(raw, limits.maxMs);
  } catch (err) {
    throw err instanceof DurationError ? new OptionError(`${name}: ${err.message}`) : err;
  }
  if (limits.minMs !== undefined && ms < limits.minMs) {
    throw new OptionError(`${name} must be at least ${limits.minMs}ms, such as ${limits.example ?? '30s'}; got "${raw}"`);
  }
  return ms;
}

/**
 * A retention (`--artifact-retention`, `--retention`, `prune --older-than`). No
 * timer is armed with it (its sweep has its own period), so months are fine.
 * `minMs` says whether zero is meaningful: zero artifact retention would keep
 * nothing and is refused; zero set retention keeps every set.
 */
export function parseRetentionOption(name: string, text: string, limits: { minMs: number; example: string }): number {
  return parseDurationOption(name, text, { ...limits, maxMs: Number.MAX_SAFE_INTEGER });
}

const SIZE_UNITS: Readonly<Record<string, number>> = Object.freeze({
  '': 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2,
  g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3, t: 1024 ** 4, tb: 1024 ** 4, tib: 1024 ** 4,
});

/** A whole number of bytes in the largest unit that says it exactly: 1048576 → 1MB. */
function sizeLabel(bytes: number): string {
  for (const [unit, size] of [['TB', 1024 ** 4], ['GB', 1024 ** 3], ['MB', 1024 ** 2], ['KB', 1024]] as const) if (bytes % size === 0) return `${bytes / size}${unit}`;
  return `${bytes} bytes`;
}

/** A size as people type it (`--max-suite-size`, `--suite-cache-size`): bytes, or `50MB`, `512k`, `1.5GB` (units of 1024). */
export function parseSizeOption(name: string, raw: string, limits: { minBytes: number; maxBytes?: number; example: string }): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(raw);
  const unit = match ? SIZE_UNITS[match[2]!.toLowerCase()] : undefined;
  const bytes = match && unit !== undefined ? Math.floor(Number(match[1]) * unit) : NaN;
  if (!Number.isSafeInteger(bytes) || bytes < limits.minBytes || bytes > (limits.maxBytes ?? Number.MAX_SAFE_INTEGER)) {
    const range = limits.maxBytes === undefined ? `of at least ${sizeLabel(limits.minBytes)}` : `from ${sizeLabel(limits.minBytes)} to ${sizeLabel(limits.maxBytes)}`;
    throw new OptionError(`${name}: "${raw}" is not a size ${range}; expected a number of bytes or one with a unit (KB, MB, GB, TB: units of 1024), e.g. ${limits.example}`);
  }
  return bytes;
}

/** pino's levels, quietest last. */
export const LOG_LEVELS = Object.freeze(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const);

export function parseLogLevel(name: string, raw: string): string {
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new OptionError(`${name} must be one of ${LOG_LEVELS.join(', ')}; got "${raw}"`);
  return raw;
}

export function parseInteger(name: string, raw: string | number | undefined, min: number, max: number): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new OptionError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return n;
}

/**
 * --metrics-port: unset (or empty) means no metrics; else a port apart from the
 * API's, so that an API open to CI does not show its metrics.
 */
export function parseMetricsPort(raw: string | undefined, apiPort: number | undefined): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  const accepted = 'expected a port number from 1 to 65535 (0: any free port), other than the API\'s --port; leave it unset for no metrics';
  if (!/^\d+$/.test(raw.trim()) || !Number.isInteger(n) || n > 65535) throw new OptionError(`--metrics-port (RUNSET_METRICS_PORT): "${raw}" is not a port; ${accepted}`);
  if (n !== 0 && n === apiPort) throw new OptionError(`--metrics-port (RUNSET_METRICS_PORT): ${n} is the API's --port too; ${accepted}`);
  return n;
}

export function defaultWorkers(): number {
  return availableParallelism();
}

export function resolvePath(p: string): string {
  return path.resolve(process.cwd(), p);
}
