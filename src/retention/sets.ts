/**
 * Set retention: sets that ended more than the retention ago go, with their
 * members, artifacts (rows and bytes) and every per-set record; sets still
 * WAITING or RUNNING stay whatever their age, and so does the duration history
 * that scheduling reads (see src/store/retention.ts for what the store removes).
 *
 * Used by `runset serve --retention` (a periodic sweep) and `runset prune`. A
 * serve given no retention applies the store's choice (RetentionWhenUnset in
 * src/store/retention.ts): the default on a store made with retention, none on
 * one an upgrade brought from before it, whose history is the operator's to drop.
 * Work goes in small batches, one transaction each, sized to take about
 * BATCH_BUDGET_MS (on SQLite a few milliseconds: it runs on the API's own
 * thread), and after each batch the sweep rests three times as long as the
 * batch took: it never holds more than a quarter of the process or of a
 * database backend, so status reads and workers' writes keep going while a
 * large history drains.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ArtifactBlobStore, SuiteArchiveStore } from '../artifacts/blobs.js';
import { formatDuration, parseDuration } from '../core/duration.js';
import type { RemovedSummary, RetentionWhenUnset } from '../store/retention.js';
import type { Store } from '../store/store.js';
import { removeUnusedSuiteVersions } from './suites.js';

/** The retention of a store made with retention, when serve is given none. */
export const DEFAULT_RETENTION = '90d';

/** The set retention a serve applies, and where it came from. */
export interface SetRetentionChoice {
  /** 0: every set is kept, and nothing sweeps. */
  ms: number;
  /** given: --retention or RUNSET_RETENTION; default: DEFAULT_RETENTION; store: none given, on a store older than retention. */
  source: 'given' | 'default' | 'store';
}

export function chooseSetRetention(givenMs: number | undefined, whenUnset: RetentionWhenUnset): SetRetentionChoice {
  if (givenMs !== undefined) return { ms: givenMs, source: 'given' };
  if (whenUnset === 'keep') return { ms: 0, source: 'store' };
  return { ms: parseDuration(DEFAULT_RETENTION, Number.MAX_SAFE_INTEGER), source: 'default' };
}

/** Said once at start by a serve that keeps every set because its store predates retention. */
export const KEPT_FOR_OLD_STORE =
  'set retention is off for this store: it was made by a runset without retention, so every set is kept until you choose a retention. ' +
  'To remove sets that ended long ago, start serve with --retention (or RUNSET_RETENTION), e.g. 90d; --retention 0 keeps every set and says nothing';

/** A retention as people type it: whole days as `90d`, else the short form of formatDuration. */
export function retentionLabel(ms: number): string {
  const DAY_MS = 86_400_000;
  return ms > 0 && ms % DAY_MS === 0 ? `${ms / DAY_MS}d` : formatDuration(ms);
}

/**
 * What one batch (one transaction) should take; its size follows what the last
 * one took. SQLite's batch runs on the API's own thread, where a status read
 * waits for it: a few milliseconds. PostgreSQL's runs in a backend of its own,
 * where small batches would cost mostly round trips; resting as long as each
 * batch took is what bounds its share of the database.
 */
export const BATCH_BUDGET_MS: Readonly<Record<Store['kind'], number>> = Object.freeze({ sqlite: 10, postgres: 100 });
/**
 * After each batch the sweep rests this many times as long as the batch took:
 * it takes at most a quarter of the process (SQLite) or of a database backend.
 * bench:retention measured half (a rest as long as the batch) halving the
 * status GET's throughput under saturating load on 2 cores.
 */
const REST_FACTOR = 3;
/** Sets in the first batch, and the bounds batches are sized within. */
const FIRST_BATCH = 50;
const MIN_BATCH = 5;
const MAX_BATCH = 1000;

/** The next batch's size: this one's scaled to the budget, at most doubling or halving at once. */
export function nextBatchSize(size: number, tookMs: number, budgetMs: number): number {
  const scaled = Math.round(size * (budgetMs / Math.max(tookMs, 0.1)));
  return Math.min(MAX_BATCH, Math.max(MIN_BATCH, Math.min(size * 2, Math.max(Math.floor(size / 2), scaled))));
}

export interface PruneResult extends RemovedSummary {
  /** Sets that ended before this time (ISO) were (or would be) removed. */
  before: string;
}

export interface PruneOptions {
  retentionMs: number;
  /** Sets per transaction, fixed; by default each batch is sized to take about the store's BATCH_BUDGET_MS. */
  batch?: number;
  now?: number;
  /** Stops between two batches (what was removed so far stays removed). */
  signal?: AbortSignal;
}

function cutoff(retentionMs: number, now: number): string {
  return new Date(now - retentionMs).toISOString();
}

/** What pruning would remove now; removes nothing (`runset prune --dry-run`). */
export async function countEndedSets(store: Store, retentionMs: number, now = Date.now()): Promise<PruneResult> {
  const before = cutoff(retentionMs, now);
  return { before, ...(await store.retention.countEndedBefore(before)) };
}

/** Removes every set that ended more than `retentionMs` before `now`, batch by batch, then their artifact bytes. */
export async function removeEndedSets(store: Store, blobs: ArtifactBlobStore, opts: PruneOptions): Promise<PruneResult> {
  const before = cutoff(opts.retentionMs, opts.now ?? Date.now());
  let batch = opts.batch ?? FIRST_BATCH;
  let from: string | null = null;
  const total: PruneResult = { before, sets: 0, members: 0, artifacts: 0, artifactBytes: 0 };
  while (!opts.signal?.aborted) {
    const started = performance.now();
    const removed = await store.retention.removeEndedBefore(before, batch, from);
    from = removed.lastEndedAt;
    const tookMs = performance.now() - started;
    // After the commit: bytes whose row is gone are unreachable, never the other way round.
    await blobs.remove(removed.artifactLocations);
    total.sets += removed.sets;
    total.members += removed.members;
    total.artifacts += removed.artifacts;
    total.artifactBytes += removed.artifactBytes;
    if (removed.sets < batch) break;
    if (opts.batch === undefined) batch = nextBatchSize(batch, tookMs, BATCH_BUDGET_MS[store.kind]);
    await sleep(Math.max(1, REST_FACTOR * tookMs), undefined, { signal: opts.signal }).catch(() => undefined);
  }
  return total;
}

export interface SetRetentionOptions {
  store: Store;
  blobs: ArtifactBlobStore;
  /** Where suite versions' archives are: unused versions past the retention go too (./suites.ts); without it, versions are kept. */
  suiteArchives?: SuiteArchiveStore;
  retentionMs: number;
  logger: Logger;
  /** Where the retention came from, for the log (default: 'given'). */
  source?: SetRetentionChoice['source'];
}

/** How often the sweep runs: a tenth of the retention, at least every minute and at most every second. */
export function sweepPeriodMs(retentionMs: number): number {
  return Math.min(60_000, Math.max(1000, Math.floor(retentionMs / 10)));
}

/**
 * Sweeps soon after start and then every sweepPeriodMs; returns the stop function (it waits for a batch under way).
 * Until a sweep first finds sets to remove, each one looks before it removes (the
 * ended-time index alone): the first removal of the process's life is logged, as a
 * warning, with how many sets, the oldest end and the retention, so that history
 * never goes without the log saying why.
 */
export function startSetRetentionSweep(opts: SetRetentionOptions): () => Promise<void> {
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  let announced = false;
  const label = `${retentionLabel(opts.retentionMs)} (${opts.source === 'default' ? 'the default' : '--retention'})`;
  const sweepSets = async (now: number) => {
    if (!announced) {
      const before = cutoff(opts.retentionMs, now);
      const due = await opts.store.retention.dueBefore(before);
      if (due.sets === 0) return;
      announced = true;
      opts.logger.warn(
        { sets: due.sets, oldestEndedAt: due.oldestEndedAt, before, retention: label },
        `set retention ${label}: removing ${due.sets} set(s) that ended before ${before}, the oldest on ${due.oldestEndedAt}`,
      );
    }
    const r = await removeEndedSets(opts.store, opts.blobs, { retentionMs: opts.retentionMs, signal: stop.signal, now });
    if (r.sets > 0) opts.logger.info(r, 'removed ended sets past their retention');
  };
  const sweepOnce = async () => {
    const now = Date.now();
    await sweepSets(now);
    // After the sets: a version whose last set just went is unused now.
    if (opts.suiteArchives === undefined || stop.signal.aborted) return;
    const suites = await removeUnusedSuiteVersions(opts.store, opts.suiteArchives, opts.retentionMs, now);
    if (suites.versions > 0 || suites.orphans > 0) opts.logger.info(suites, `removed ${suites.versions} suite version(s) that no set or name used, uploaded before the retention cut-off`);
  };
  const sweep = () => {
    running ??= sweepOnce()
      .catch((err: unknown) => opts.logger.warn({ err }, 'set retention sweep failed; will retry'))
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(sweep, 1000);
  const timer = setInterval(sweep, sweepPeriodMs(opts.retentionMs));
  first.unref();
  timer.unref();
  return async () => {
    clearTimeout(first);
    clearInterval(timer);
    stop.abort();
    await running;
  };
}

/**
 * What `serve` runs: the retention given, else the store's choice. A sweep when
 * there is a retention; otherwise none, and on a store older than retention a
 * warning at start that says so and how to choose one. Returns the stop function.
 */
export async function startSetRetention(opts: Omit<SetRetentionOptions, 'retentionMs' | 'source'> & { givenMs: number | undefined }): Promise<() => Promise<void>> {
  const choice = chooseSetRetention(opts.givenMs, await opts.store.retention.whenUnset());
  if (choice.ms > 0) return startSetRetentionSweep({ ...opts, retentionMs: choice.ms, source: choice.source });
  if (choice.source === 'store') opts.logger.warn({ retention: 'off' }, KEPT_FOR_OLD_STORE);
  return () => Promise.resolve();
}
