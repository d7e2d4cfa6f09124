/**
 * The worker protocol over HTTP (/api/v0/worker/…): one route per WorkerLink
 * operation (src/worker-link/link.ts), so that a worker process holding no
 * database and no secret key runs members exactly as a direct one does. Every
 * route goes through a storeLink over this API's store, so what follows an
 * outcome (the duration history, fail fast) happens here, as for any worker.
 *
 * Bearer keys only, of role worker (or admin: src/auth/policy.ts). A key
 * limited to environments claims only members of sets in them, and names no
 * other set. Writes under a lease are fenced as the store fences them: a lease
 * that moved answers 409 lease_lost and nothing is written.
 *
 * The notices stream is in ./worker-notices.ts, artifact uploads in
 * ./worker-artifacts.ts, suite archives in ./worker-suites.ts.
 */
import path from 'node:path';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { echo, RunsetError } from '../../core/errors.js';
import type { RunOutcome } from '../../core/types.js';
import type { ApiKeyRecord } from '../../core/keys.js';
import {
  BatchClaimBody, BatchRef, BatchWorkerList, ClaimBody, ClaimedRuns, FinishAndClaimBody, FinishedAndClaimedWire, FinishRunBody,
  HeartbeatRunBody, MAX_CLAIM_WAIT_MS, OLDEST_WORKER_PROTOCOL, RegisterWorkerBody, ReleasedRuns, ReleaseRunsBody, StartRunBody, WaitingWork, WorkerAlive,
  WORKER_PROTOCOL, WORKER_PROTOCOL_HEADER, WorkerIdBody, WorkerSettings, type FinishRunBody as FinishRunWire, type LeaseWire,
} from '../../core/wire-worker.js';
import { VERSION } from '../../core/version.js';
import { openLeaseTicket } from '../lease-tickets.js';
import { DEFAULT_MAX_ARTIFACT_BYTES } from '../../artifacts/blobs.js';
import { leaseOf } from '../../store/store.js';
import { storeLink } from '../../worker-link/store-link.js';
import type { AppDeps } from '../deps.js';
import { requireKey } from '../auth.js';
import { attachRequiredRole, authorizeRoute, seesSetEnv, setNotFound } from '../permission.js';
import { claimsToWire, claimWaiting, closingSignal, type Closing, type ClaimWire, type Waiting } from '../worker-claims.js';
import { BEARER_ONLY, BODY_PROBLEMS, named, problems } from './common.js';
import { workerArtifactRoutes, openSignedLocation, UNKEPT_ARTIFACTS } from './worker-artifacts.js';
import { workerNoticeRoutes } from './worker-notices.js';
import { workerSuiteRoutes } from './worker-suites.js';

const NO_CONTENT = { type: 'null', description: 'Done.' } as const;
const PROTOCOL = 'Worker protocol: for `runset worker --url`, with a key of role worker (or admin).';
const LEASE_LOST = 'the lease is no longer this worker\'s (it expired and the member went back to WAITING or to another worker, or its set was cancelled); nothing was written';

export const workerProtocolRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const logger = deps.logger.child({ component: 'worker-protocol' });
  const blobs = deps.artifacts ?? UNKEPT_ARTIFACTS;
  const link = storeLink({ store: deps.store, blobs, suiteArchives: deps.suiteArchives, workerStaleMs: deps.workerStaleMs, logger });
  const wire: ClaimWire = {
    link,
    secretKey: deps.secretKey,
    allowPrivateTargets: (env) => deps.suite().environments.get(env)?.allowPrivateTargets ?? false,
    suiteDir: () => path.dirname(deps.suite().file),
    logger,
  };
  const closing = closingSignal(app);
  app.addHook('onClose', () => link.flush());
  app.addHook('onRoute', attachRequiredRole);
  app.addHook('onRequest', requireKey(deps.auth, authorizeRoute));
  app.addHook('onRequest', takesWorkerProtocol);
  // Only a key that passed counts as a worker attached: the API reaps leases while one is (src/worker-link/reaper.ts).
  if (deps.onWorkerRequest) app.addHook('preHandler', (_request, _reply, done) => (deps.onWorkerRequest?.(), done()));

  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const doc = <S extends object>(operationId: string, summary: string, extra: S) => ({
    schema: { summary, description: `${summary}. ${PROTOCOL}`, tags: ['Worker protocol'], operationId, security: BEARER_ONLY, ...extra },
  });

  api.get('/settings', doc('getWorkerSettings', 'What a worker needs to know of this service before it starts', {
    response: { 200: named(WorkerSettings, 'Heartbeat period, staleness, artifact limit, longest claim wait'), ...problems(401, 403) },
  }), () => ({
    heartbeatMs: Math.max(100, Math.floor(deps.workerStaleMs / 3)),
    staleAfterMs: deps.workerStaleMs,
    maxArtifactBytes: deps.artifacts?.maxBytes ?? DEFAULT_MAX_ARTIFACT_BYTES,
    maxClaimWaitMs: MAX_CLAIM_WAIT_MS,
    version: VERSION,
    protocol: { oldest: OLDEST_WORKER_PROTOCOL, newest: WORKER_PROTOCOL },
  }));

  // ── the workers registry ──
  api.post('/workers', doc('registerWorker', 'Register a worker process as alive now (again, if it was dropped)', {
    body: named(RegisterWorkerBody), response: { 204: NO_CONTENT, ...problems(...BODY_PROBLEMS, 401, 403) },
  }), async (request, reply) => {
    // A worker id is bound to the key that registered it: another key's is 404, as if absent.
    if (!(await deps.store.workers.register({ ...request.body, keyId: keyIdOf(request.apiKey) }))) {
      throw new RunsetError('not_found', `no worker ${request.body.id} of this key can be registered: the id is taken; use a new one`);
    }
    return reply.code(204).send(null);
  });
  api.post('/workers/heartbeat', doc('heartbeatWorker', 'Mark a worker process alive now', {
    body: named(WorkerIdBody), response: { 200: named(WorkerAlive, 'Whether it was still registered'), ...problems(...BODY_PROBLEMS, 401, 403) },
  }), async (request) => ({ alive: await deps.store.workers.heartbeat(request.body.id, keyIdOf(request.apiKey)) }));
  api.post('/workers/remove', doc('removeWorker', 'Remove a worker process from the registry (it stops)', {
    body: named(WorkerIdBody), response: { 204: NO_CONTENT, ...problems(...BODY_PROBLEMS, 401, 403) },
  }), async (request, reply) => {
    // Only this key's worker is removed; any other id is left alone, and the answer is the same.
    await deps.store.workers.remove(request.body.id, keyIdOf(request.apiKey));
    return reply.code(204).send(null);
  });
  api.post('/batch-workers', doc('listBatchWorkers', 'Every live worker, with what it holds of one batch (what a share is sized from)', {
    body: named(BatchRef), response: { 200: named(BatchWorkerList, 'The live workers'), ...problems(...BODY_PROBLEMS, 401, 403, 404) },
  }), async (request) => {
    await visibleSet(request.apiKey, request.body.setId);
    return { workers: await link.batchWorkers(request.body.setId, request.body.batchKey) };
  });
  api.post('/waiting-work', doc('listWaitingWork', 'Expected durations of the batch\'s members nobody holds, longest first', {
    body: named(BatchRef), response: { 200: named(WaitingWork, 'Expected durations (ms)'), ...problems(...BODY_PROBLEMS, 401, 403, 404) },
  }), async (request) => {
    await visibleSet(request.apiKey, request.body.setId);
    return { expectedMs: await link.waitingWork(request.body.setId, request.body.batchKey, request.body.limit ?? 256) };
  });

  // ── claims ──
  api.post('/claims', doc('claimRuns', 'Claim waiting members under leases; with waitMs, answer as soon as work exists', {
    description: `Members are taken longest expected first, leased to workerId for leaseMs. While nothing waits, waitMs (at most ${MAX_CLAIM_WAIT_MS} ms) holds the answer until work exists, then answers empty. A key limited to environments claims only members of sets in them.`,
    body: named(ClaimBody), response: { 200: named(ClaimedRuns, 'The claimed members, variables opened'), ...problems(...BODY_PROBLEMS, 401, 403) },
  }), async (request, reply) => {
    const { waitMs = 0, ...req } = request.body;
    const key = request.apiKey;
    // A held claim claims again only for a key that is still live: one revoked (or
    // expired) while it waited gets 401, and claims nothing of sets made since.
    const claimed = await claimWaiting(link, { ...req, envs: key?.envs ?? undefined }, waitMs, waitingOf(reply, closing), () => keyStillLive(request));
    return { runs: await claimsToWire(claimed, wire, keyIdOf(key)) };
  });
  api.post('/batch-claims', doc('claimBatch', 'Claim more waiting members of one batch (set and batch key), reserved', {
    body: named(BatchClaimBody), response: { 200: named(ClaimedRuns, 'The claimed members, variables opened'), ...problems(...BODY_PROBLEMS, 401, 403, 404) },
  }), async (request) => {
    await visibleSet(request.apiKey, request.body.setId);
    return { runs: await claimsToWire(await link.claimBatch({ ...request.body, envs: request.apiKey?.envs ?? undefined }), wire, keyIdOf(request.apiKey)) };
  });

  // ── writes under a lease ──
  const fenced = { ...problems(...BODY_PROBLEMS, 401, 403, 409) };
  api.post('/leases/start', doc('startRun', 'A reserved member began: RUNNING under the same lease', {
    body: named(StartRunBody), response: { 204: NO_CONTENT, ...fenced },
  }), async (request, reply) => {
    if (!(await link.startRun(ticketed(request.apiKey, request.body.lease).lease, request.body.sinceMs))) throw new RunsetError('lease_lost', LEASE_LOST);
    return reply.code(204).send(null);
  });
  api.post('/leases/heartbeat', doc('heartbeatRun', 'Keep a lease alive (and record the attempt under way)', {
    body: named(HeartbeatRunBody), response: { 204: NO_CONTENT, ...fenced },
  }), async (request, reply) => {
    const { lease, leaseMs, attempts } = request.body;
    if (!(await link.heartbeat(ticketed(request.apiKey, lease).lease, leaseMs, attempts))) throw new RunsetError('lease_lost', LEASE_LOST);
    return reply.code(204).send(null);
  });
  api.post('/leases/finish', doc('finishRun', 'End a member under its lease with its outcome and artifacts', {
    body: named(FinishRunBody), response: { 204: NO_CONTENT, ...fenced, ...problems(404) },
  }), async (request, reply) => {
    const { lease, outcome, run } = finishOf(request.apiKey, request.body);
    if (!(await link.finishRun(lease, outcome, run).catch(refusedMove))) throw new RunsetError('lease_lost', LEASE_LOST);
    return reply.code(204).send(null);
  });
  api.post('/leases/finish-and-claim', doc('finishAndClaim', 'End a member, start the one reserved for the slot, claim the next: one round trip', {
    description: 'When the finished member\'s lease moved: 409 lease_lost, and nothing stands: the reserved member (next.start) and what the claim took are given back to WAITING at once.',
    body: named(FinishAndClaimBody), response: { 200: named(FinishedAndClaimedWire, 'Written; the reserved member started or not; what was claimed'), ...fenced, ...problems(404) },
  }), async (request) => {
    const { lease, outcome, run } = finishOf(request.apiKey, request.body);
    const { start, ...claim } = request.body.next;
    const next = { ...claim, envs: request.apiKey?.envs ?? undefined, ...(start ? { start: ticketed(request.apiKey, start).lease } : {}) };
    const step = await link.finishAndClaim(lease, outcome, run, next).catch(refusedMove);
    if (!step.finished) {
      // Nothing of this answer reaches the worker, so nothing of it stands: what the claim
      // took, and the reserved member it started, go back at once rather than wait for their leases.
      const back = [...step.claimed.map(leaseOf), ...(step.started && next.start ? [next.start] : [])];
      if (back.length > 0) await link.releaseRuns(back);
      throw new RunsetError('lease_lost', LEASE_LOST);
    }
    return { started: step.started, runs: await claimsToWire(step.claimed, wire, keyIdOf(request.apiKey)) };
  });
  api.post('/leases/release', doc('releaseRuns', 'Give leased members back to WAITING (no lost lease counted)', {
    body: named(ReleaseRunsBody), response: { 200: named(ReleasedRuns, 'How many were this worker\'s'), ...problems(...BODY_PROBLEMS, 401, 403) },
  }), async (request) => ({ released: await link.releaseRuns(request.body.leases.map((lease) => ticketed(request.apiKey, lease).lease)) }));

  await app.register(workerNoticeRoutes, { deps, link, closing });
  await app.register(workerArtifactRoutes, { deps, blobs });
  await app.register(workerSuiteRoutes, { link, suites: deps.store.suiteVersions });

  /** A set this key may name: else 404, as for a set that does not exist. */
  async function visibleSet(key: ApiKeyRecord | null, setId: string): Promise<void> {
    if (key?.envs === null) return;
    const set = await deps.store.sets.get(setId);
    if (!set || !seesSetEnv(key, set.env)) throw setNotFound(setId);
  }

  /** A lease whose ticket this key was given, with the stored row's facts it carries; else 404, as for a lease that does not exist. */
  function ticketed(key: ApiKeyRecord | null, lease: LeaseWire) {
    const facts = openLeaseTicket(deps.secretKey, keyIdOf(key), lease);
    if (!facts || !seesSetEnv(key, facts.env)) throw new RunsetError('not_found', `this key holds no lease ${lease.claim} of member ${lease.runId}: send the lease with the ticket (token) its claim answered`);
    return { lease: { runId: lease.runId, workerId: lease.workerId, claim: lease.claim }, facts };
  }

  /** A held request's key, read again from the store (not the cache): is it still neither revoked nor expired? */
  async function keyStillLive(request: FastifyRequest): Promise<boolean> {
    return (await deps.auth.recheck(request.headers.authorization)) !== undefined;
  }

  /**
   * The finish's parts as the link takes them: artifact locations checked and
   * unsigned; the member's set, environment and name from its lease's ticket
   * (the stored row, as claimed), never from the body's `run`.
   */
  function finishOf(key: ApiKeyRecord | null, body: Pick<FinishRunWire, 'lease' | 'outcome' | 'run'>) {
    const { lease, facts } = ticketed(key, body.lease);
    const artifacts = body.outcome.artifacts?.map((a) => {
      const location = openSignedLocation(deps.secretKey, a.location);
      if (location === undefined) throw new RunsetError('invalid_body', `artifact ${a.id}: its location is not one this service's upload answered; upload it with PUT /api/v0/worker/artifacts/{id}`);
      return { ...a, location };
    });
    const outcome: RunOutcome = { ...body.outcome, ...(artifacts ? { artifacts } : {}) };
    return { lease, outcome, run: { setId: facts.setId, env: facts.env, spec: { name: facts.name } } };
  }
};

const keyIdOf = (key: ApiKeyRecord | null): string => key?.id ?? '';

/**
 * A move the member's state forbids (both stores refuse it with "illegal member
 * move …", and roll back): a direct worker never asks for one, a worker over
 * HTTP is told what was wrong rather than answered 500.
 */
function refusedMove(err: unknown): never {
  if (err instanceof Error && err.message.includes('illegal member move')) {
    throw new RunsetError('illegal_move', `${err.message.slice(err.message.indexOf('illegal member move'))}; a reserved member is started first (POST /api/v0/worker/leases/start), or ends FAIL; nothing was written`);
  }
  throw err;
}

/** A waiting claim stops when its client goes (the response closes before it was sent) or the server closes. */
function waitingOf(reply: FastifyReply, closing: Closing): Waiting {
  let gone = false;
  const left = new Promise<void>((resolve) => {
    reply.raw.once('close', () => {
      gone = true;
      resolve();
    });
  });
  return { gone: Promise.race([left, closing.promise]), isGone: () => gone || closing.closed };
}

/**
 * A worker of a protocol revision this API does not take is refused on its
 * first request (its settings), saying which it speaks and which are taken.
 * No header: a worker from before revisions were sent, which speaks revision 1.
 */
function takesWorkerProtocol(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const sent = request.headers[WORKER_PROTOCOL_HEADER];
  const revision = sent === undefined ? 1 : /^[0-9]{1,6}$/.test(String(sent)) ? Number(sent) : Number.NaN;
  if (!(revision >= OLDEST_WORKER_PROTOCOL && revision <= WORKER_PROTOCOL)) {
    return done(new RunsetError('worker_protocol_unsupported', `this API (runset ${VERSION}) takes worker protocol revisions ${OLDEST_WORKER_PROTOCOL} to ${WORKER_PROTOCOL}; `
      + `the worker sent ${WORKER_PROTOCOL_HEADER}: ${echo(String(sent))}. Run a worker of the API's version (runset ${VERSION}), or upgrade the API first`));
  }
  done();
}
