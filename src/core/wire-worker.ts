/**
 * Wire shapes of the worker protocol (/api/v0/worker/…, src/api/routes/worker-protocol.ts):
 * what a worker that holds no database says to the service and hears back, as
 * TypeBox schemas. The client (src/worker-link/http-link.ts) speaks the same shapes.
 *
 * A claimed member comes with its variables in clear, secret ones opened by the
 * API and marked `secret`, so that the worker masks them in what it reports; and
 * with its environment's outbound rule (allowPrivateTargets), which the worker
 * has no config to read from.
 */
import type { Static, TUnsafe } from 'typebox';
import { Type } from './typebox.js';
import type { TestSpec } from './types.js';
import { refTo, Uuid } from './wire.js';
import { MAX_DURATION_MS } from './duration.js';
import { SUITE_ID, VERSION_ROOT } from './suites.js';

/**
 * The worker protocol's revision, sent by every HTTP worker in the
 * WORKER_PROTOCOL_HEADER of each request. It moves up by one when a request or
 * an answer of the protocol changes so that the other side would misread it
 * (a field added that the API may ignore does not move it). An API accepts
 * its own revision and the one before (OLDEST_WORKER_PROTOCOL), so workers may
 * be upgraded after the API, one release apart (docs/compatibility.md).
 */
export const WORKER_PROTOCOL = 1;
export const OLDEST_WORKER_PROTOCOL = 1;
export const WORKER_PROTOCOL_HEADER = 'runset-worker-protocol';

/** The longest a claim waits for work before it answers empty. */
export const MAX_CLAIM_WAIT_MS = 30_000;
/** Most members one claim or release names (the scheduler's batches take at most 256). */
export const MAX_CLAIM_LIMIT = 1024;

const WorkerId = Type.String({ minLength: 1, maxLength: 200, description: 'The worker process\'s id, as it registered (host/pid/random).' });
const RunId = Type.String({ minLength: 1, maxLength: 64 });
const BatchKey = Type.String({ minLength: 1, maxLength: 1000 });
// Every number a worker sends is bounded: a worker machine is not trusted to keep them sane
// (a durationMs of 1e308 would be stored, shown and averaged into history).
const MAX_INT32 = 2_147_483_647;
/** The longest a member may take, as Node's timers count (about 24.8 days). */
const DurationMs = Type.Number({ minimum: 0, maximum: MAX_DURATION_MS, description: 'Milliseconds, at most 2^31 - 1 (about 24.8 days).' });
/** Far above any retries setting (a test's retries are at most a few): a bound, not a policy. */
const Attempts = Type.Integer({ minimum: 0, maximum: 1000 });
const LeaseMs = Type.Integer({ minimum: 200, maximum: 3_600_000, description: 'How long the lease lasts without a heartbeat (ms).' });

export const WorkerSettings = Type.Object(
  {
    heartbeatMs: Type.Integer({ description: 'How often a worker heartbeats (the registry and its leases are judged by it).' }),
    staleAfterMs: Type.Integer({ description: 'A worker silent this long is dropped from the registry.' }),
    maxArtifactBytes: Type.Integer({ description: 'Largest artifact an upload may carry.' }),
    maxClaimWaitMs: Type.Integer({ description: 'The longest a claim waits for work (waitMs is capped to it).' }),
    version: Type.String({ description: 'The runset version of the API answering.' }),
    protocol: Type.Object(
      {
        oldest: Type.Integer({ description: 'The oldest worker protocol revision this API takes.' }),
        newest: Type.Integer({ description: 'The newest worker protocol revision this API takes (its own).' }),
      },
      { additionalProperties: false, description: `The worker protocol revisions this API takes (a worker sends its own in the \`${WORKER_PROTOCOL_HEADER}\` header).` },
    ),
  },
  { additionalProperties: false, $id: 'WorkerSettings' },
);
export type WorkerSettings = Static<typeof WorkerSettings>;

export const RegisterWorkerBody = Type.Object(
  {
    id: WorkerId,
    host: Type.String({ minLength: 1, maxLength: 255 }),
    pid: Type.Integer({ minimum: 0, maximum: MAX_INT32 }),
    slots: Type.Integer({ minimum: 1, maximum: 4096 }),
  },
  { additionalProperties: false, $id: 'RegisterWorkerBody' },
);

export const WorkerIdBody = Type.Object({ id: WorkerId }, { additionalProperties: false, $id: 'WorkerIdBody' });

export const WorkerAlive = Type.Object(
  { alive: Type.Boolean({ description: 'false: the registry had dropped this worker as stale; register again.' }) },
  { additionalProperties: false, $id: 'WorkerAlive' },
);

export const BatchRef = Type.Object(
  { setId: Uuid, batchKey: BatchKey, limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_CLAIM_LIMIT })) },
  { additionalProperties: false, $id: 'BatchRef' },
);

export const BatchWorkerList = Type.Object(
  {
    workers: Type.Array(
      Type.Object({ id: Type.String(), host: Type.String(), slots: Type.Integer(), holding: Type.Integer(), heldMs: Type.Number() }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false, $id: 'BatchWorkerList' },
);

export const WaitingWork = Type.Object(
  { expectedMs: Type.Array(Type.Number(), { description: 'Expected durations of the batch\'s members nobody holds, longest first.' }) },
  { additionalProperties: false, $id: 'WaitingWork' },
);

const claimFields = {
  workerId: WorkerId,
  limit: Type.Integer({ minimum: 0, maximum: MAX_CLAIM_LIMIT }),
  leaseMs: LeaseMs,
  reserve: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_CLAIM_LIMIT, description: 'How many of the limit to reserve rather than start.' })),
  skipBatchKeys: Type.Optional(Type.Array(BatchKey, { maxItems: 100 })),
  setId: Type.Optional(Type.String({ format: 'uuid', description: 'Only members of this set.' })),
};

export const ClaimBody = Type.Object(
  {
    ...claimFields,
    waitMs: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_CLAIM_WAIT_MS, description: 'While nothing waits, hold the answer up to this long and answer as soon as work exists.' })),
  },
  { additionalProperties: false, $id: 'ClaimBody' },
);
export type ClaimBody = Static<typeof ClaimBody>;

export const BatchClaimBody = Type.Object(
  { ...claimFields, setId: Uuid, batchKey: BatchKey },
  { additionalProperties: false, $id: 'BatchClaimBody' },
);
export type BatchClaimBody = Static<typeof BatchClaimBody>;

/** Ticket sizes: the facts of a member (set, environment, test name) and a MAC. */
const MAX_TICKET_LENGTH = 16_384;

export const LeaseWire = Type.Object(
  {
    runId: RunId,
    workerId: WorkerId,
    claim: Type.Integer({ minimum: 0, maximum: MAX_INT32, description: 'The fencing token the claim answered.' }),
    token: Type.String({ minLength: 1, maxLength: MAX_TICKET_LENGTH, description: 'The lease\'s ticket, as the claim answered it (leaseToken): it proves the lease is this key\'s.' }),
  },
  { additionalProperties: false, $id: 'Lease' },
);
export type LeaseWire = Static<typeof LeaseWire>;

/** A variable's value as a worker receives it: in clear, secret ones marked so that they are masked. */
export const VariableWire = Type.Object({ value: Type.String(), secret: Type.Boolean() }, { additionalProperties: false });

const SpecWire: TUnsafe<TestSpec> = Type.Unsafe<TestSpec>({
  type: 'object',
  additionalProperties: true,
  description: 'The test as runset.config.yaml declared it, frozen into the member (type http, command, playwright, vitest, jest, mocha, cucumber, pytest or newman).',
});

export const ClaimedRunWire = Type.Object(
  {
    id: RunId,
    setId: Uuid,
    env: Type.String(),
    spec: SpecWire,
    expectedMs: Type.Number(),
    variables: Type.Record(Type.String(), VariableWire),
    claim: Type.Integer(),
    workerId: WorkerId,
    batchKey: Type.Union([Type.String(), Type.Null()], { description: 'Members of one set with one batch key run in one executor call; such members are claimed reserved (WAITING until they begin).' }),
    allowPrivateTargets: Type.Boolean({ description: 'The environment\'s outbound rule: its http tests may reach private addresses.' }),
    suiteDir: Type.String({ description: 'The folder of the API\'s runset.config.yaml: the spec\'s paths under it are read under a worker\'s --suite-root instead.' }),
    suite: Type.Optional(Type.String({ pattern: SUITE_ID.source, description: `The suite version its set runs (fetch it with GET /api/v0/worker/suites/{id}); its spec's paths are under ${VERSION_ROOT}. Absent: the server's own config.` })),
    leaseToken: Type.String({ description: 'The lease\'s ticket, signed for the key that claimed it: send it back as lease.token with every write under the lease.' }),
  },
  { additionalProperties: false, $id: 'ClaimedRun' },
);
export type ClaimedRunWire = Static<typeof ClaimedRunWire>;

export const ClaimedRuns = Type.Object({ runs: Type.Array(refTo(ClaimedRunWire)) }, { additionalProperties: false, $id: 'ClaimedRuns' });
export type ClaimedRuns = Static<typeof ClaimedRuns>;

export const StartRunBody = Type.Object(
  { lease: refTo(LeaseWire), sinceMs: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_DURATION_MS, description: 'How long ago the member began, by the worker\'s clock.' })) },
  { additionalProperties: false, $id: 'StartRunBody' },
);

export const HeartbeatRunBody = Type.Object(
  { lease: refTo(LeaseWire), leaseMs: LeaseMs, attempts: Attempts },
  { additionalProperties: false, $id: 'HeartbeatRunBody' },
);

const OutcomeWire = Type.Object(
  {
    status: Type.Union([Type.Literal('SUCCESS'), Type.Literal('FAIL')]),
    attempts: Attempts,
    error: Type.Union([Type.String({ maxLength: 4096 }), Type.Null()]),
    output: Type.String({ maxLength: 256 * 1024 }),
    durationMs: DurationMs,
    skipped: Type.Optional(Type.Boolean({ description: 'Passed because its framework skipped it (test.skip, test.fixme, test.todo); absent: false. Only with SUCCESS.' })),
    cases: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ maxLength: 4096 }),
            status: Type.Union([Type.Literal('passed'), Type.Literal('failed'), Type.Literal('skipped')]),
            durationMs: DurationMs,
            error: Type.Union([Type.String({ maxLength: 4096 }), Type.Null()]),
          },
          { additionalProperties: false },
        ),
        { maxItems: 5000, description: "The cases of a report the test wrote (a command's junit:), in report order; absent: none." },
      ),
    ),
    artifacts: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Uuid,
            name: Type.String({ minLength: 1, maxLength: 500 }),
            contentType: Type.String({ minLength: 1, maxLength: 200 }),
            size: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
            location: Type.String({ minLength: 1, maxLength: 1000, description: 'As the upload answered it (signed by the API).' }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 1000 },
      ),
    ),
  },
  { additionalProperties: false },
);

/** The member a finish is about, beside its lease: what the service's history and fail fast need. */
const FinishedRunWire = Type.Object({ setId: Uuid, env: Type.String({ minLength: 1 }), name: Type.String({ minLength: 1 }) }, { additionalProperties: false });

export const FinishRunBody = Type.Object(
  { lease: refTo(LeaseWire), outcome: OutcomeWire, run: FinishedRunWire },
  { additionalProperties: false, $id: 'FinishRunBody' },
);
export type FinishRunBody = Static<typeof FinishRunBody>;

export const FinishAndClaimBody = Type.Object(
  {
    lease: refTo(LeaseWire),
    outcome: OutcomeWire,
    run: FinishedRunWire,
    next: Type.Object({ ...claimFields, start: Type.Optional(refTo(LeaseWire)) }, { additionalProperties: false }),
  },
  { additionalProperties: false, $id: 'FinishAndClaimBody' },
);
export type FinishAndClaimBody = Static<typeof FinishAndClaimBody>;

export const FinishedAndClaimedWire = Type.Object(
  {
    started: Type.Boolean({ description: 'The reserved member named by next.start is RUNNING under its lease.' }),
    runs: Type.Array(refTo(ClaimedRunWire)),
  },
  { additionalProperties: false, $id: 'FinishedAndClaimed' },
);

export const ReleaseRunsBody = Type.Object(
  { leases: Type.Array(refTo(LeaseWire), { maxItems: MAX_CLAIM_LIMIT }) },
  { additionalProperties: false, $id: 'ReleaseRunsBody' },
);

export const ReleasedRuns = Type.Object({ released: Type.Integer() }, { additionalProperties: false, $id: 'ReleasedRuns' });

/** One line of the notices stream (application/x-ndjson). */
export const WorkerNotice = Type.Union(
  [
    Type.Object({ type: Type.Literal('runs-waiting') }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('set-cancelled'), setId: Uuid }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('ping') }, { additionalProperties: false }),
  ],
  { $id: 'WorkerNotice', description: 'runs-waiting: claim now; set-cancelled: stop its members; ping: the stream is alive (every 15 s).' },
);
export type WorkerNotice = Static<typeof WorkerNotice>;

export const ArtifactStored = Type.Object(
  { location: Type.String({ description: 'Where the bytes are, signed: record it with the member\'s outcome as it is.' }), size: Type.Integer() },
  { additionalProperties: false, $id: 'ArtifactStored' },
);

export const RemoveArtifactsBody = Type.Object(
  { locations: Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), { maxItems: 1000 }) },
  { additionalProperties: false, $id: 'RemoveArtifactsBody' },
);

/** Every named schema of the protocol, for the API to register (SHARED_SCHEMAS). */
export const WORKER_SCHEMAS = [
  WorkerSettings, RegisterWorkerBody, WorkerIdBody, WorkerAlive, BatchRef, BatchWorkerList, WaitingWork,
  ClaimBody, BatchClaimBody, LeaseWire, ClaimedRunWire, ClaimedRuns, StartRunBody, HeartbeatRunBody,
  FinishRunBody, FinishAndClaimBody, FinishedAndClaimedWire, ReleaseRunsBody, ReleasedRuns, WorkerNotice,
  ArtifactStored, RemoveArtifactsBody,
] as const;
