/**
 * A WorkerLink over a store this process holds: `serve` with workers, and
 * direct PostgreSQL workers. The API's worker protocol routes serve HTTP
 * workers through one of these too, so what follows a finish (the duration
 * history, fail fast) happens in one place whatever the worker's transport.
 *
 * Successful durations gather for a second so that a busy service makes one
 * history write a second rather than one a member.
 */
import type { Logger } from 'pino';
import type { DurationSample, RunOutcome } from '../core/types.js';
import type { Store } from '../store/store.js';
import type { ArtifactBlobStore, SuiteArchiveStore } from '../artifacts/blobs.js';
import { SuiteArchiveGoneError } from '../core/suites.js';
import { enforceMaxFailures } from '../sets/cancel.js';
import type { FinishedRunRef, WorkerLink } from './link.js';

/** How long successful durations gather before they are written to the history together. */
const HISTORY_FLUSH_MS = 1000;

export interface StoreLinkOptions {
  store: Store;
  /** Where artifact bytes go (the store's own blobs on PostgreSQL, else files). */
  blobs: ArtifactBlobStore;
  /** Where suite versions' archives are; without it no version can be fetched (SuiteArchiveGoneError). */
  suiteArchives?: SuiteArchiveStore;
  /** How long a worker may miss heartbeats before it counts as gone (staleAfterMs). */
  workerStaleMs: number;
  logger: Logger;
}

export interface StoreLink extends WorkerLink {
  /** Writes the durations gathered so far (on shutdown, so none is left behind). */
  flush(): Promise<void>;
}

export function storeLink(opts: StoreLinkOptions): StoreLink {
  const { store, logger } = opts;
  let samples: DurationSample[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  const flush = async (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    const batch = samples;
    samples = [];
    if (batch.length > 0) {
      flushing = flushing.then(() =>
        store.durations.record(batch).catch((err: unknown) => {
          // History only orders and shares future sets; losing a second of it costs nothing else.
          logger.warn({ err, samples: batch.length }, 'recording test durations failed; they are left out of the history');
        }),
      );
    }
    await flushing;
  };

  /** After an outcome is written: a success joins the history, a failure is checked against fail fast. */
  const ended = (run: FinishedRunRef, outcome: RunOutcome): void => {
    if (outcome.status === 'SUCCESS') {
      samples.push({ env: run.env, name: run.spec.name, ms: outcome.durationMs });
      if (timer === undefined) {
        timer = setTimeout(() => void flush(), HISTORY_FLUSH_MS);
        timer.unref();
      }
      return;
    }
    // Beside the worker's next step, not before it: the cancel reaches the worker's own members like any other.
    enforceMaxFailures(store, run.setId).then(
      (cancelled) => cancelled && logger.info({ set: run.setId }, 'maxFailures reached: the rest of the set is cancelled'),
      (err: unknown) => logger.warn({ err, set: run.setId }, 'checking maxFailures failed; the set runs on'),
    );
  };

  return {
    registerWorker: async (worker) => void (await store.workers.register(worker)),
    heartbeatWorker: (id) => store.workers.heartbeat(id),
    removeWorker: (id) => store.workers.remove(id),
    batchWorkers: (setId, batchKey) => store.workers.batchWorkers(setId, batchKey, opts.workerStaleMs),
    waitingWork: (setId, batchKey, limit) => store.claims.waitingWork(setId, batchKey, limit),
    claimRuns: (req) => store.claims.claimRuns(req),
    claimBatch: (req) => store.claims.claimBatch(req),
    startRun: (lease, sinceMs) => store.claims.startRun(lease, sinceMs),
    heartbeat: (lease, leaseMs, attempts) => store.claims.heartbeat(lease, leaseMs, attempts),
    async finishRun(lease, outcome, run) {
      const finished = await store.claims.finishRun(lease, outcome);
      if (finished) ended(run, outcome);
      return finished;
    },
    async finishAndClaim(lease, outcome, run, next) {
      const step = await store.claims.finishAndClaim(lease, outcome, next);
      if (step.finished) ended(run, outcome);
      return step;
    },
    releaseRuns: (leases) => store.claims.releaseRuns(leases),
    onRunsWaiting: (listener) => store.claims.onRunsWaiting(listener),
    onSetCancelled: (listener) => store.claims.onSetCancelled(listener),
    artifacts: opts.blobs,
    async suiteArchive(id) {
      const version = await store.suiteVersions.get(id);
      if (version === undefined) throw new SuiteArchiveGoneError(id, 'the service has no such version (never uploaded, or removed by retention once unused)');
      const bytes = await opts.suiteArchives?.open(version.location);
      if (bytes === undefined) throw new SuiteArchiveGoneError(id, `its archive's bytes are missing from the service's store (${opts.suiteArchives ? 'removed' : 'this process keeps no suite archives'})`);
      return bytes;
    },
    flush,
  };
}
