/**
 * One member run under its lease by a worker slot: the lease is heartbeated
 * from the start until the slot says the outcome is written (which may be after
 * the run ended: the write goes on beside the slot's next member), and a lease
 * lost meanwhile stops the run.
 */
import type { Logger } from 'pino';
import type { ClaimedRun, Executor, OutboundPolicy, RunOutcome, TestType } from '../core/types.js';
import type { LeaseRef } from '../store/store.js';
import type { WorkerLink } from '../worker-link/link.js';
import { runMember, type ResolveVariables } from './run-member.js';
import type { WorkerMetrics } from './worker-metrics.js';

export interface LeasedRunDeps {
  /** The service, as a worker sees it. */
  link: WorkerLink;
  executors: ReadonlyMap<TestType, Executor>;
  resolveVariables: ResolveVariables;
  /** The outbound address rules of an environment's members (its allowPrivateTargets); default: the strict ones. */
  outboundPolicy?: (env: string) => OutboundPolicy;
  logger: Logger;
  /** How long a claim stays ours without a heartbeat. */
  leaseMs: number;
  /** Told of members' starts and ends; absent when metrics are off. */
  metrics?: WorkerMetrics;
}

/** A member run under its lease: its outcome (undefined when it crashed), and the end of its heartbeat. */
export interface Execution {
  outcome: Promise<RunOutcome | undefined>;
  /** Stops the heartbeat: call once the outcome is written (or will not be). */
  settled(): void;
}

export function runUnderLease(run: ClaimedRun, lease: LeaseRef, abort: AbortController, deps: LeasedRunDeps): Execution {
  const { link, leaseMs, logger } = deps;
  let attempts = 0;
  let writing = false;
  const heartbeat = setInterval(() => {
    link.heartbeat(lease, leaseMs, attempts).then(
      (ours) => {
        if (ours || abort.signal.aborted) return;
        // While the outcome is being written the row may already have ended: no news then.
        if (!writing) logger.warn({ run: run.id, claim: lease.claim }, 'lease lost: another worker took the member over; stopping it');
        abort.abort('lease lost');
      },
      (err: unknown) => logger.warn({ err, run: run.id }, 'heartbeat failed; will retry'),
    );
  }, Math.max(50, Math.floor(leaseMs / 3)));
  deps.metrics?.memberStarted(run);
  const outcome = runMember(run, {
    executors: deps.executors,
    resolveVariables: deps.resolveVariables,
    outboundPolicy: deps.outboundPolicy,
    signal: abort.signal,
    onAttempt: (n) => (attempts = n),
  }).then(
    (outcome) => {
      writing = true;
      return outcome;
    },
    (err: unknown) => {
      logger.error({ err, run: run.id }, 'running a member failed unexpectedly');
      return undefined;
    },
  );
  return { outcome, settled: () => clearInterval(heartbeat) };
}
