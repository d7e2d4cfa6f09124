/**
 * The one run path: the members a claim handed to this worker that run
 * together — a single member, or a share of a batch (the cases of one
 * Playwright or framework entry, one executor call) — from their claim to their written
 * outcomes.
 *
 * - Leases: every member's is held by the pool's LeaseKeeper until its outcome
 *   is written. A member whose lease is lost is somebody else's now: nothing
 *   more is written for it, and when nothing still running is ours the run is
 *   aborted (its process tree killed).
 * - Starts: a single member was claimed RUNNING; a batch's members, and the
 *   members of a set that runs a suite version (its files and dependencies are
 *   made ready first), were claimed reserved and start (a fenced write) when
 *   the executor reports their begin, so the set's counts move live and a
 *   member is never RUNNING while its suite version is being prepared.
 * - Ends: each member's result becomes its outcome (./outcome-builder.ts:
 *   secrets masked, artifacts stored) and goes to `finish`, which writes it
 *   under the lease (a batch at once; a slot beside its next member).
 * - Leftovers: a member the executor gives back as interrupted (another case
 *   hung and the batch was killed) is released to WAITING; one it never
 *   settled fails. On an abort (shutdown, cancel, a lost lease) nothing is
 *   written: the pool releases what it still holds on shutdown.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { ArtifactSaver } from '../artifacts/save.js';
import { startsAtClaim } from '../core/moves.js';
import type { CaseResult, ClaimedRun, Executor, OsUser, OutboundPolicy, RunOutcome, TestSpec, TestType, VariableValue } from '../core/types.js';
import type { TestUsers } from '../executors/test-users.js';
import type { ResolvedVariables } from '../secrets/index.js';
import { leaseOf, type LeaseRef } from '../store/store.js';
import type { WorkerLink } from '../worker-link/link.js';
import type { InFlight } from './inflight.js';
import type { LeaseKeeper } from './lease-keeper.js';
import { buildOutcome, failedBeforeStart, messageOf } from './outcome-builder.js';
import { runSingle } from './run-single.js';
import { checkOutSuiteVersion, type SuiteVersionCheckout, type SuiteVersionSource } from './suite-checkout.js';
import type { WorkerMetrics } from './worker-metrics.js';

export type ResolveVariables = (variables: Readonly<Record<string, VariableValue>>) => ResolvedVariables;

/** What every run of a pool runs with. */
export interface RunDeps {
  link: Pick<WorkerLink, 'startRun' | 'releaseRuns'>;
  keeper: LeaseKeeper;
  executors: ReadonlyMap<TestType, Executor>;
  resolveVariables: ResolveVariables;
  /** The outbound address rules of an environment's members (its allowPrivateTargets); default: the strict ones. */
  outboundPolicy?: (env: string) => OutboundPolicy;
  /** Where executors' files become stored artifacts; without it they are not kept. */
  artifacts?: ArtifactSaver;
  logger: Logger;
  /** Batches get a fresh scratch folder under this one. */
  workRoot: string;
  /** The members this process runs (what shutdown and cancels abort): a run adds its own and removes each once settled. */
  inflight: Map<string, InFlight>;
  /** Told of members' starts; absent when metrics are off. */
  metrics?: WorkerMetrics;
  /** Where members of sets that run an uploaded suite version get its files; without it such members fail. */
  suites?: SuiteVersionSource;
  /** Under --run-as, a user per slot: each run's processes run as one no other running member has (../executors/test-users.ts). */
  testUsers?: TestUsers;
}

/** One run: its members (one set, one batch key or a single member), its slots, its abort, and how an outcome is written. */
export interface RunRequest {
  runs: readonly ClaimedRun[];
  /** Members the executor may run at once (a single member: 1). */
  parallelism: number;
  abort: AbortController;
  /** Writes an outcome under the member's lease; false when it was not written (the lease was not ours). */
  finish(run: ClaimedRun, outcome: RunOutcome): Promise<boolean>;
}

interface Member {
  run: ClaimedRun;
  lease: LeaseRef;
  attempts: number;
  /** The store has it RUNNING (or a write to make it so is under way). */
  started: boolean;
  /** The executor reported its end (or gave it back). */
  ended: boolean;
  interrupted: boolean;
  /** Its lease went to another worker: nothing more is written for it. */
  lost: boolean;
  /** Stops keeping its lease alive and forgets it: its outcome is written, or it is given back or lost. */
  settle: () => void;
  /** Its lease is somebody else's now (the keeper found it gone, or its start was refused). */
  lose: () => void;
  /** Its writes, in event order. */
  chain: Promise<void>;
  /** When this worker took it (performance.now()). */
  takenAt: number;
}

/** What turning a member's end into an outcome needs. */
interface EndContext {
  members: readonly Member[];
  req: RunRequest;
  deps: RunDeps;
  resolved: ResolvedVariables;
  workDir: string | undefined;
  /** The slot user the executor ran as, once it has one. */
  runAs?: OsUser;
}

export async function runMembers(req: RunRequest, deps: RunDeps): Promise<void> {
  const { runs, abort } = req;
  const head = runs[0] as ClaimedRun;
  const members: Member[] = runs.map((run) => hold(run, req, deps, (m) => lose(m, members, abort)));
  try {
    let resolved: ResolvedVariables;
    try {
      resolved = deps.resolveVariables(head.variables);
    } catch (err) {
      return await failAll(members, messageOf(err), req, deps);
    }
    let checkout: SuiteVersionCheckout;
    try {
      checkout = await checkOutSuiteVersion(runs, deps.suites, abort.signal);
    } catch (err) {
      if (abort.signal.aborted) return; // shutdown or a lost lease: nothing is written (see settleLeftovers)
      return await failAll(members, messageOf(err), req, deps);
    }
    try {
      await execute(checkout.specs, members, req, deps, resolved);
    } finally {
      checkout.release();
    }
  } finally {
    for (const m of members) m.settle();
  }
}

/** Runs the members' specs (as the version's files when their set runs one) with their executor. */
async function execute(specs: TestSpec[], members: Member[], req: RunRequest, deps: RunDeps, resolved: ResolvedVariables): Promise<void> {
  const { runs, abort } = req;
  const head = runs[0] as ClaimedRun;
  const spec = specs[0] as TestSpec;
  const executor = deps.executors.get(head.spec.type);
  if (head.batchKey === null) {
    if (!executor) return await failAll(members, `no executor for tests of type "${head.spec.type}" in this worker; it runs ${[...deps.executors.keys()].join(', ')}`, req, deps);
    const ctx: EndContext = { members, req, deps, resolved, workDir: undefined };
    await executeAndSettle(members, ctx, () => asTestUser(ctx, (runAs) =>
      runSingle(executor, spec, {
        variables: resolved.values,
        signal: abort.signal,
        runAs,
        outbound: deps.outboundPolicy?.(head.env),
        onBegin: (index, attempt) => begin(members[index], attempt, deps),
        onEnd: (index, result) => end(members[index], result, ctx),
      })),
    );
    return;
  }
  const batch = executor?.runBatch?.bind(executor);
  if (!batch) return await failAll(members, `no executor for batches of type "${head.spec.type}" in this worker`, req, deps);
  let workDir: string;
  try {
    await mkdir(deps.workRoot, { recursive: true });
    workDir = await mkdtemp(path.join(deps.workRoot, 'batch-'));
  } catch (err) {
    // Nothing ran: say why on every member rather than leave them leased until their leases expire.
    return await failAll(members, `cannot make the batch's scratch folder under ${deps.workRoot}: ${messageOf(err)}`, req, deps);
  }
  const ctx: EndContext = { members, req, deps, resolved, workDir };
  try {
    await executeAndSettle(members, ctx, () => asTestUser(ctx, (runAs) =>
      batch(specs, {
        variables: resolved.values,
        signal: abort.signal,
        runAs,
        workDir,
        parallelism: req.parallelism,
        onBegin: (index, attempt) => begin(members[index], attempt, deps),
        onEnd: (index, result) => end(members[index], result, ctx),
      })),
    );
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * Runs the executor as a slot user of its own (under --run-as), given back —
 * every process of it killed — as soon as the executor returns: the slot's
 * next member may start before this one's outcome is written.
 */
async function asTestUser(ctx: EndContext, run: (runAs: OsUser | undefined) => Promise<void>): Promise<void> {
  const users = ctx.deps.testUsers;
  if (!users) return run(undefined);
  const user = await users.take();
  ctx.runAs = user;
  try {
    await run(user);
  } finally {
    users.give(user);
  }
}

/** A member taken on: its lease kept alive, known to the pool's in-flight members. */
function hold(run: ClaimedRun, req: RunRequest, deps: RunDeps, lost: (m: Member) => void): Member {
  const lease = leaseOf(run);
  // A single member of the server's own tests was claimed RUNNING: it starts here now. A batch's members,
  // and those of a suite version (prepared first), were claimed reserved and start at their begin.
  const started = startsAtClaim(run);
  const m: Member = {
    run, lease, attempts: 0, started, ended: false, interrupted: false, lost: false,
    settle: () => undefined, lose: () => lost(m), chain: Promise.resolve(), takenAt: performance.now(),
  };
  const release = deps.keeper.hold(lease, { attempts: () => m.attempts, ended: () => m.ended, lost: () => m.lose() });
  m.settle = () => {
    release();
    // A later run of this process may hold the same member again (given back, claimed anew): forget only our own entry.
    if (deps.inflight.get(run.id)?.lease === lease) deps.inflight.delete(run.id);
  };
  deps.inflight.set(run.id, { setId: run.setId, lease, abort: req.abort });
  if (started) deps.metrics?.memberStarted(run);
  return m;
}

/** Runs the executor, then settles what it left: a crash fails every member it had not ended. */
async function executeAndSettle(members: Member[], ctx: EndContext, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    ctx.deps.logger.error({ err, run: members[0]?.run.id }, 'a batch executor crashed');
    for (const m of members) if (!m.ended) end(m, crashed(err), ctx);
  }
  await Promise.all(members.map((m) => m.chain));
  await settleLeftovers(members, ctx);
}

function begin(m: Member | undefined, attempt: number, deps: RunDeps): void {
  if (!m || m.lost || m.ended) return;
  m.attempts = attempt;
  if (m.started) return;
  m.started = true; // optimistic: later events must not start it twice
  deps.metrics?.memberStarted(m.run);
  m.chain = m.chain.then(async () => {
    if (await deps.link.startRun(m.lease)) return;
    deps.logger.warn({ run: m.run.id, claim: m.lease.claim }, 'lease lost: another worker took the member over; ignoring its result here');
    m.lose();
  }).catch((err: unknown) => {
    m.started = false; // the end retries it
    deps.logger.warn({ err, run: m.run.id }, 'recording a test start failed');
  });
}

function end(m: Member | undefined, result: CaseResult, ctx: EndContext): void {
  if (!m || m.ended) return;
  m.ended = true;
  m.attempts = Math.max(m.attempts, result.attempts);
  stopIfNoneOurs(ctx.members, ctx.req.abort);
  if (result.interrupted) {
    m.interrupted = true;
    return;
  }
  m.chain = m.chain
    .then(() => complete(m, result, ctx))
    .catch((err: unknown) => ctx.deps.logger.error({ err, run: m.run.id }, 'recording a test result failed'));
}

/** Builds the member's outcome (its artifacts stored) and writes it under its lease. */
async function complete(m: Member, result: CaseResult, { req, deps, resolved, workDir, runAs }: EndContext): Promise<void> {
  if (m.lost) return;
  const outcome = await withScratch(workDir, result, deps, (scratch) =>
    buildOutcome({ ...result, attempts: m.attempts }, { secrets: resolved.secrets, artifacts: deps.artifacts, workDir: scratch, reader: runAs }),
  );
  await startUnbegun(m, deps);
  const ours = await req.finish(m.run, outcome);
  if (!ours) await deps.artifacts?.discard(outcome.artifacts ?? []);
  m.settle();
}

/**
 * `use` given the folder where masked copies of the member's files are made:
 * the batch's, or for a single member that left files (a command's
 * `artifacts:`) one made for it and removed after; none when there are none.
 */
async function withScratch<T>(workDir: string | undefined, result: CaseResult, deps: RunDeps, use: (scratch: string | undefined) => Promise<T>): Promise<T> {
  if (workDir !== undefined || result.artifacts.length === 0) return use(workDir);
  await mkdir(deps.workRoot, { recursive: true });
  const scratch = await mkdtemp(path.join(deps.workRoot, 'single-'));
  try {
    return await use(scratch);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** After the executor returned: give back what was interrupted, fail what it never settled. */
async function settleLeftovers(members: Member[], ctx: EndContext): Promise<void> {
  if (ctx.req.abort.signal.aborted) return; // shutdown: the pool releases every lease it still holds; a lost lease is not ours
  const interrupted = members.filter((m) => m.interrupted && !m.lost);
  if (interrupted.length > 0) {
    await ctx.deps.link.releaseRuns(interrupted.map((m) => m.lease));
    for (const m of interrupted) m.settle();
  }
  const forgotten = members.filter((m) => !m.ended && !m.lost);
  for (const m of forgotten) end(m, crashed(new Error('the executor ended without a result for this test')), ctx);
  await Promise.all(forgotten.map((m) => m.chain));
}

/** The member's lease is somebody else's now (the keeper found it gone, or its start was refused): forget it. */
function lose(m: Member, members: readonly Member[], abort: AbortController): void {
  if (m.lost) return;
  m.lost = true;
  m.settle();
  stopIfNoneOurs(members, abort);
}

/** Nothing the executor still runs is ours any more: stop it (its process tree, browsers and all). */
function stopIfNoneOurs(members: readonly Member[], abort: AbortController): void {
  const running = members.filter((m) => !m.ended);
  if (running.length > 0 && running.every((m) => m.lost) && !abort.signal.aborted) abort.abort('lease lost');
}

function crashed(err: unknown): CaseResult {
  return { passed: false, error: `executor crashed: ${messageOf(err)}`, output: '', attempts: 0, durationMs: 0, artifacts: [] };
}

/**
 * A member that ends without a begin event (skipped where declared, or failed
 * before Playwright ran it: a preflight or config error, a crash) still ran on
 * this worker: it starts at the moment the worker took it, so its worker and a
 * start before its end are recorded, as for any member that ran.
 */
async function startUnbegun(m: Member, deps: RunDeps): Promise<void> {
  if (m.started) return;
  m.started = true;
  if (!(await deps.link.startRun(m.lease, performance.now() - m.takenAt))) {
    deps.logger.warn({ run: m.run.id }, 'a test that ended before it began could not be started; writing its outcome anyway');
  }
}

async function failAll(members: Member[], error: string, req: RunRequest, deps: RunDeps): Promise<void> {
  for (const m of members) {
    await startUnbegun(m, deps);
    await req.finish(m.run, failedBeforeStart(error, performance.now() - m.takenAt));
    m.settle();
  }
}
