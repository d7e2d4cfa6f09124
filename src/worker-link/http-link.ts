/**
 * A WorkerLink over HTTP: the worker protocol's client, for `runset worker
 * --url URL`, a worker process that holds no database URL and no secret key.
 * Each operation is one request to /api/v0/worker/… (src/api/routes/worker-protocol.ts);
 * the API does what follows an outcome (history, fail fast) through its own storeLink.
 *
 * - Claims wait on the server while nothing waits (at most a third of the
 *   lease, so that an answer is never taken for one that outlived its lease),
 *   and answer as soon as work exists.
 * - Claimed members come with their variables in clear, secret ones marked:
 *   they become `opened` values, which resolveVariables takes as they are and
 *   masks like any secret; and with their environment's outbound rule, kept
 *   here for outboundPolicy().
 * - Wake-ups and cancels come on the notices stream (./http-notices.ts).
 * - `setId` (`--set ID`) narrows every claim to one set.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { ClaimedRun, OutboundPolicy, RunOutcome, VariableValue } from '../core/types.js';
import { relocateSpec } from './suite-root.js';
import { MAX_CLAIM_LIMIT, MAX_CLAIM_WAIT_MS, type ClaimedRunWire, type WorkerSettings } from '../core/wire-worker.js';
import { ArtifactTooLargeError, DEFAULT_MAX_ARTIFACT_BYTES, type ArtifactSink } from '../artifacts/blobs.js';
import type { BatchWorker, ClaimRequest, LeaseRef, NextClaim } from '../store/store.js';
import type { FinishedRunRef, WorkerLink } from './link.js';
import { LinkRefusedError, requester, type Requester } from './http-request.js';
import { SuiteArchiveGoneError } from '../core/suites.js';
import { followNotices, type NoticeListeners } from './http-notices.js';

export interface HttpLinkOptions {
  /** The API's base address, ending in /api. */
  url: string;
  /** An API key of role worker (or admin); sent only as the Authorization header. */
  key: string;
  logger: Logger;
  /** Only members of this set (`runset worker --set ID`). */
  setId?: string;
  /** Where this machine holds the suite the API's config names (`--suite-root`); default: the same paths as the API. */
  suiteRoot?: string;
}

export interface HttpLink extends WorkerLink {
  /** The API's base address, as requests go to it. */
  readonly url: string;
  /** What the service tells a worker before it starts (heartbeat period, artifact limit); checks the URL and key. */
  settings(): Promise<WorkerSettings>;
  /** The outbound rule of an environment, as its members' claims said. */
  outboundPolicy(env: string): OutboundPolicy;
  /** Stops the notices stream and every request under way (a waiting claim answers nothing). */
  close(): Promise<void>;
}

export function httpLink(opts: HttpLinkOptions): HttpLink {
  const closing = new AbortController();
  const http: Requester = requester(opts.url, opts.key, closing.signal);
  const listeners: NoticeListeners = { runsWaiting: new Set(), setCancelled: new Set() };
  const privateTargets = new Map<string, boolean>();
  let maxArtifactBytes = DEFAULT_MAX_ARTIFACT_BYTES;
  let notices: Promise<void> | undefined;

  const followOnce = () => {
    notices ??= followNotices({ url: http.url, key: opts.key, logger: opts.logger, listeners, closed: closing.signal });
  };
  const subscribe = <T>(set: Set<T>, listener: T): (() => void) => {
    set.add(listener);
    followOnce();
    return () => set.delete(listener);
  };
  const runsOf = (body: unknown): ClaimedRun[] => ((body as { runs: ClaimedRunWire[] }).runs).map((wire) => {
    privateTargets.set(wire.env, wire.allowPrivateTargets);
    const run = claimedOf(wire);
    return opts.suiteRoot === undefined ? run : { ...run, spec: relocateSpec(run.spec, wire.suiteDir, opts.suiteRoot) };
  });
  const claimFields = (req: ClaimRequest) => ({
    workerId: req.workerId, limit: req.limit, leaseMs: req.leaseMs, reserve: req.reserve,
    skipBatchKeys: req.skipBatchKeys?.length ? req.skipBatchKeys : undefined, setId: opts.setId,
  });
  /** True when written, false on 409 (the lease moved: nothing was written). */
  const fenced = async (route: string, json: unknown, retry: boolean) => (await http.send('POST', route, { json, retry })).status !== 409;

  const artifacts: ArtifactSink = {
    get maxBytes() {
      return maxArtifactBytes;
    },
    async put(id, file) {
      const { size } = await stat(file);
      if (size > maxArtifactBytes) throw new ArtifactTooLargeError(size, maxArtifactBytes);
      const res = await http.send('PUT', `/v0/worker/artifacts/${encodeURIComponent(id)}`, { body: createReadStream(file) }).catch((err: unknown) => {
        if ((err as { status?: unknown }).status === 413) throw new ArtifactTooLargeError(size, maxArtifactBytes);
        throw err;
      });
      return res.body as { location: string; size: number };
    },
    async remove(locations) {
      for (let i = 0; i < locations.length; i += 1000) {
        await http.send('POST', '/v0/worker/artifacts/remove', { json: { locations: locations.slice(i, i + 1000) }, retry: true });
      }
    },
  };

  return {
    url: http.url,
    async settings() {
      const settings = (await http.send('GET', '/v0/worker/settings', { retry: true })).body as WorkerSettings;
      maxArtifactBytes = settings.maxArtifactBytes;
      return settings;
    },
    outboundPolicy: (env) => ({ allowPrivateTargets: privateTargets.get(env) ?? false }),

    async registerWorker(worker) {
      await http.send('POST', '/v0/worker/workers', { json: worker, retry: true });
    },
    heartbeatWorker: async (id) => ((await http.send('POST', '/v0/worker/workers/heartbeat', { json: { id }, retry: true })).body as { alive: boolean }).alive,
    async removeWorker(id) {
      await http.send('POST', '/v0/worker/workers/remove', { json: { id }, retry: true });
    },
    batchWorkers: async (setId, batchKey) =>
      ((await http.send('POST', '/v0/worker/batch-workers', { json: { setId, batchKey }, retry: true })).body as { workers: BatchWorker[] }).workers,
    waitingWork: async (setId, batchKey, limit) =>
      ((await http.send('POST', '/v0/worker/waiting-work', { json: { setId, batchKey, limit: Math.min(limit, MAX_CLAIM_LIMIT) }, retry: true })).body as { expectedMs: number[] }).expectedMs,

    async claimRuns(req) {
      // Never retried: a claim whose answer was lost may have taken members, which a second claim would strand.
      const waitMs = Math.min(MAX_CLAIM_WAIT_MS, Math.floor(req.leaseMs / 3));
      try {
        return runsOf((await http.send('POST', '/v0/worker/claims', { json: { ...claimFields(req), waitMs } })).body);
      } catch (err) {
        if (closing.signal.aborted) return []; // shutting down: the pool has stopped claiming
        throw err;
      }
    },
    claimBatch: async (req) =>
      runsOf((await http.send('POST', '/v0/worker/batch-claims', { json: { ...claimFields(req), setId: req.setId, batchKey: req.batchKey } })).body),
    // A start repeats safely (already RUNNING under the lease: only renewed); so does a heartbeat.
    startRun: (lease, sinceMs) => fenced('/v0/worker/leases/start', { lease: leaseWire(lease), sinceMs }, true),
    heartbeat: (lease, leaseMs, attempts) => fenced('/v0/worker/leases/heartbeat', { lease: leaseWire(lease), leaseMs, attempts }, true),
    // Outcome writes are retried by the scheduler's OutcomeWriter, which knows when a retry is one.
    finishRun: (lease, outcome, run) => fenced('/v0/worker/leases/finish', finishBody(lease, outcome, run), false),
    async finishAndClaim(lease, outcome, run, next: NextClaim) {
      const json = { ...finishBody(lease, outcome, run), next: { ...claimFields(next), start: next.start && leaseWire(next.start) } };
      const res = await http.send('POST', '/v0/worker/leases/finish-and-claim', { json });
      if (res.status === 409) return { finished: false, started: false, claimed: [] };
      return { finished: true, started: (res.body as { started: boolean }).started, claimed: runsOf(res.body) };
    },
    async releaseRuns(leases) {
      let released = 0;
      for (let i = 0; i < leases.length; i += MAX_CLAIM_LIMIT) {
        const json = { leases: leases.slice(i, i + MAX_CLAIM_LIMIT).map(leaseWire) };
        released += ((await http.send('POST', '/v0/worker/leases/release', { json, retry: true })).body as { released: number }).released;
      }
      return released;
    },

    onRunsWaiting: (listener) => subscribe(listeners.runsWaiting, listener),
    onSetCancelled: (listener) => subscribe(listeners.setCancelled, listener),
    artifacts,
    async suiteArchive(id, signal) {
      try {
        return await http.stream(`/v0/worker/suites/${encodeURIComponent(id)}`, { signal });
      } catch (err) {
        if (err instanceof LinkRefusedError && err.status === 404) throw new SuiteArchiveGoneError(id, `the API at ${http.url} has no such version, or its archive is gone (${err.message})`);
        throw err;
      }
    },
    async close() {
      closing.abort();
      await notices;
    },
  };
}

/** A lease as the wire takes it: with the ticket its claim answered, which proves it is this key's. */
function leaseWire(lease: LeaseRef): LeaseRef {
  return { runId: lease.runId, workerId: lease.workerId, claim: lease.claim, token: lease.token ?? '' };
}

function finishBody(lease: LeaseRef, outcome: RunOutcome, run: FinishedRunRef) {
  const { status, attempts, error, output, durationMs, skipped, artifacts, cases } = outcome;
  return {
    lease: leaseWire(lease),
    // `skipped` only when true: an API older than the mark refuses a field it does not know.
    outcome: { status, attempts, error, output, durationMs, ...(skipped ? { skipped } : {}), ...(artifacts?.length ? { artifacts } : {}), ...(cases?.length ? { cases } : {}) },
    run: { setId: run.setId, env: run.env, name: run.spec.name },
  };
}

/** A claimed member as the scheduler takes it: secret values opened by the API, marked so that they are masked. */
function claimedOf(wire: ClaimedRunWire): ClaimedRun {
  const variables: Record<string, VariableValue> = {};
  for (const [name, v] of Object.entries(wire.variables)) variables[name] = v.secret ? { kind: 'opened', value: v.value } : { kind: 'plain', value: v.value };
  return {
    id: wire.id, setId: wire.setId, env: wire.env, spec: wire.spec, expectedMs: wire.expectedMs,
    variables, claim: wire.claim, workerId: wire.workerId, batchKey: wire.batchKey, leaseToken: wire.leaseToken,
    ...(wire.suite ? { suiteVersion: wire.suite } : {}),
  };
}
