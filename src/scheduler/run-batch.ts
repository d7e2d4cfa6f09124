/**
 * One batch, start to end: members of one set with one batch key (the cases of
 * a Playwright suite), run by one executor call. The executor reports each
 * member's begin and end as they happen; this turns them into fenced store
 * writes — reserved → RUNNING at begin, → SUCCESS/FAIL at end, artifacts stored
 * and recorded with the outcome — so the set's counts move live.
 *
 * Every member keeps its own lease, heartbeated here. A member whose lease is
 * lost is somebody else's now: its events are ignored. A member the executor
 * gives back as interrupted (another case hung and the batch was killed) is
 * released to WAITING, to run again in a later batch.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { ArtifactSaver } from '../artifacts/save.js';
import type { CaseResult, ClaimedRun, Executor, RunOutcome } from '../core/types.js';
import { redact, type ResolvedVariables } from '../secrets/index.js';
import { leaseOf, type LeaseRef } from '../store/store.js';
import type { WorkerLink } from '../worker-link/link.js';
import { messageOf, oneLine, tail, type ResolveVariables } from './run-member.js';
import type { WorkerMetrics } from './worker-metrics.js';

export interface BatchDeps {
  link: WorkerLink;
  executor: Executor | undefined;
  resolveVariables: ResolveVariables;
  artifacts: ArtifactSaver | undefined;
  logger: Logger;
  leaseMs: number;
  /** Batches get a fresh folder under this one. */
  workRoot: string;
  /** Writes an outcome (retrying transient failures); false when the lease was not ours. */
  finish(run: ClaimedRun, outcome: RunOutcome): Promise<boolean>;
  /** A member is settled (ended, released or lost): the pool forgets it. */
  settled(runId: string): void;
  metrics?: WorkerMetrics;
}

interface Member {
  run: ClaimedRun;
  lease: LeaseRef;
  attempts: number;
  /** The store moved it to RUNNING. */
  started: boolean;
  /** The executor reported its end (or gave it back). */
  ended: boolean;
  interrupted: boolean;
  /** Its lease went to another worker: nothing more is written for it. */
  lost: boolean;
  /** Its outcome is written, or it was given back: the lease is no longer held. */
  done: boolean;
  /** Its store writes, in event order. */
  chain: Promise<void>;
  /** When this worker took it (performance.now()). */
  takenAt: number;
}

export async function runBatch(runs: readonly ClaimedRun[], parallelism: number, abort: AbortController, deps: BatchDeps): Promise<void> {
  const takenAt = performance.now();
  const members = runs.map<Member>((run) => ({
    run, lease: leaseOf(run),
    attempts: 0, started: false, ended: false, interrupted: false, lost: false, done: false, chain: Promise.resolve(), takenAt,
  }));
  let resolved: ResolvedVariables;
  try {
    resolved = deps.resolveVariables((runs[0] as ClaimedRun).variables);
  } catch (err) {
    return failAll(members, messageOf(err), deps);
  }
  const executor = deps.executor;
  if (!executor?.runBatch) return failAll(members, `no executor for batches of type "${runs[0]?.spec.type}" in this worker`, deps);
  // Leases are kept alive until every outcome is written: saving a trace and
  // writing the last results take a while after the executor returns.
  const heartbeat = startHeartbeat(members, abort, deps);
  try {
    let workDir: string;
    try {
      await mkdir(deps.workRoot, { recursive: true });
      workDir = await mkdtemp(path.join(deps.workRoot, 'batch-'));
    } catch (err) {
      // Nothing ran: say why on every member rather than leave them leased until their leases expire.
      return await failAll(members, `cannot make the batch's scratch folder under ${deps.workRoot}: ${messageOf(err)}`, deps);
    }
    try {
      await executor.runBatch(runs.map((r) => r.spec), {
        variables: resolved.values,
        signal: abort.signal,
        workDir,
        parallelism,
        onBegin: (index, attempt) => begin(members[index], attempt, deps),
        onEnd: (index, result) => end(members[index], result, { deps, resolved, workDir }),
      });
    } catch (err) {
      deps.logger.error({ err, run: runs[0]?.id }, 'a batch executor crashed');
      for (const m of members) if (!m.ended) end(m, crashed(err), { deps, resolved, workDir });
    }
    await Promise.all(members.map((m) => m.chain));
    try {
      await settleLeftovers(members, abort.signal, deps, { deps, resolved, workDir });
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  } finally {
    clearInterval(heartbeat);
  }
}

function begin(m: Member | undefined, attempt: number, deps: BatchDeps): void {
  if (!m || m.lost || m.ended) return;
  m.attempts = attempt;
  if (m.started) return;
  m.started = true; // optimistic: later events must not start it twice
  deps.metrics?.memberStarted(m.run);
  m.chain = m.chain.then(async () => {
    if (!(await deps.link.startRun(m.lease))) lose(m, deps);
  }).catch((err: unknown) => {
    m.started = false; // the end retries it
    deps.logger.warn({ err, run: m.run.id }, 'recording a test start failed');
  });
}

interface EndContext {
  deps: BatchDeps;
  resolved: ResolvedVariables;
  workDir: string;
}

function end(m: Member | undefined, result: CaseResult, ctx: EndContext): void {
  if (!m || m.ended) return;
  m.ended = true;
  m.attempts = Math.max(m.attempts, result.attempts);
  if (result.interrupted) {
    m.interrupted = true;
    return;
  }
  m.chain = m.chain
    .then(() => complete(m, result, ctx))
    .catch((err: unknown) => ctx.deps.logger.error({ err, run: m.run.id }, 'recording a test result failed'));
}

/** Stores the member's artifacts and writes its outcome under its lease. */
async function complete(m: Member, result: CaseResult, { deps, resolved, workDir }: EndContext): Promise<void> {
  if (m.lost) return;
  const secrets = resolved.secrets;
  const saved = deps.artifacts && result.artifacts.length > 0 ? await deps.artifacts.save(result.artifacts, secrets, workDir) : undefined;
  const notes = saved && saved.notes.length > 0 ? `\n${saved.notes.join('\n')}\n` : '';
  const outcome: RunOutcome = {
    status: result.passed ? 'SUCCESS' : 'FAIL',
    attempts: m.attempts,
    error: result.passed ? null : oneLine(redact(result.error ?? 'failed', secrets)),
    output: tail(redact(result.output + notes, secrets)),
    durationMs: result.durationMs,
    artifacts: saved?.artifacts ?? [],
  };
  await startUnbegun(m, deps);
  const ours = await deps.finish(m.run, outcome);
  m.done = true;
  if (!ours) await deps.artifacts?.discard(outcome.artifacts ?? []);
  deps.settled(m.run.id);
}

/** After the executor returned: give back what was interrupted, fail what it never settled. */
async function settleLeftovers(members: Member[], signal: AbortSignal, deps: BatchDeps, ctx: EndContext): Promise<void> {
  if (signal.aborted) return; // shutdown: the pool releases every lease it still holds; a lost lease is not ours
  const interrupted = members.filter((m) => m.interrupted && !m.lost);
  if (interrupted.length > 0) {
    await deps.link.releaseRuns(interrupted.map((m) => m.lease));
    for (const m of interrupted) {
      m.done = true;
      deps.settled(m.run.id);
    }
  }
  const forgotten = members.filter((m) => !m.ended && !m.lost);
  for (const m of forgotten) end(m, crashed(new Error('the executor ended without a result for this test')), ctx);
  await Promise.all(forgotten.map((m) => m.chain));
}

function startHeartbeat(members: Member[], abort: AbortController, deps: BatchDeps): NodeJS.Timeout {
  return setInterval(() => {
    void Promise.all(
      members.map(async (m) => {
        if (m.lost || m.done) return;
        try {
          // An ended member's outcome may be committing right now: a miss then is no news.
          if (!(await deps.link.heartbeat(m.lease, deps.leaseMs, m.attempts)) && !m.ended) lose(m, deps);
        } catch (err) {
          deps.logger.warn({ err, run: m.run.id }, 'heartbeat failed; will retry');
        }
      }),
    ).then(() => {
      // Nothing still running is ours any more: stop the browsers.
      const running = members.filter((m) => !m.ended);
      if (running.length > 0 && running.every((m) => m.lost) && !abort.signal.aborted) abort.abort('lease lost');
    });
  }, Math.max(50, Math.floor(deps.leaseMs / 3)));
}

function lose(m: Member, deps: BatchDeps): void {
  if (m.lost) return;
  m.lost = true;
  deps.logger.warn({ run: m.run.id, claim: m.lease.claim }, 'lease lost: another worker took the member over; ignoring its result here');
  deps.settled(m.run.id);
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
async function startUnbegun(m: Member, deps: BatchDeps): Promise<void> {
  if (m.started) return;
  m.started = true;
  if (!(await deps.link.startRun(m.lease, performance.now() - m.takenAt))) {
    deps.logger.warn({ run: m.run.id }, 'a test that ended before it began could not be started; writing its outcome anyway');
  }
}

async function failAll(members: Member[], error: string, deps: BatchDeps): Promise<void> {
  for (const m of members) {
    await startUnbegun(m, deps);
    await deps.finish(m.run, { status: 'FAIL', attempts: 0, error: oneLine(error), output: '', durationMs: 0 });
    deps.settled(m.run.id);
  }
}
