/**
 * The service side of a claim over HTTP: what a claimed member becomes on the
 * wire (variables opened by the API, secret ones marked; the environment's
 * outbound rule), and the waiting claim that answers as soon as work exists.
 *
 * A member whose secret variables this API cannot open (a `${env:NAME}` it
 * lacks, a value sealed under another key) ends FAIL here with the reason, as
 * a direct worker would end it: the HTTP worker never sees it.
 */
import type { FastifyInstance } from 'fastify';
import { RunsetError } from '../core/errors.js';
import type { Logger } from 'pino';
import type { ClaimedRun, VariableValue } from '../core/types.js';
import type { ClaimedRunWire } from '../core/wire-worker.js';
import { isSecret, resolveVariables, type ResolvedVariables } from '../secrets/index.js';
import { leaseOf, type ClaimRequest } from '../store/store.js';
import type { WorkerLink } from '../worker-link/link.js';
import { leaseTicket } from './lease-tickets.js';

export interface ClaimWire {
  link: WorkerLink;
  secretKey: Buffer;
  /** The environment's allowPrivateTargets, read from the current config. */
  allowPrivateTargets: (env: string) => boolean;
  /** The folder of the current config file, which the specs' paths are under. */
  suiteDir: () => string;
  logger: Logger;
}

/**
 * Claimed members as the worker receives them, each with its lease's ticket
 * for the key that claimed it (`keyId`); those whose variables cannot be
 * opened end FAIL and are left out.
 */
export async function claimsToWire(runs: readonly ClaimedRun[], deps: ClaimWire, keyId: string): Promise<ClaimedRunWire[]> {
  const opened = new Map<string, ResolvedVariables | Error>(); // one opening per set
  const out: ClaimedRunWire[] = [];
  for (const run of runs) {
    let vars = opened.get(run.setId);
    if (vars === undefined) {
      vars = open(run.variables, deps.secretKey);
      opened.set(run.setId, vars);
    }
    if (vars instanceof Error) {
      await failUnopened(run, vars, deps);
      continue;
    }
    const values = vars.values;
    out.push({
      id: run.id,
      setId: run.setId,
      env: run.env,
      spec: run.spec,
      expectedMs: run.expectedMs,
      variables: Object.fromEntries(Object.entries(run.variables).map(([name, v]) => [name, { value: values[name] ?? '', secret: isSecret(v) }])),
      claim: run.claim,
      workerId: run.workerId,
      batchKey: run.batchKey,
      allowPrivateTargets: deps.allowPrivateTargets(run.env),
      suiteDir: deps.suiteDir(),
      ...(run.suiteVersion ? { suite: run.suiteVersion } : {}),
      leaseToken: leaseTicket(deps.secretKey, keyId, run),
    });
  }
  return out;
}

function open(variables: Readonly<Record<string, VariableValue>>, key: Buffer): ResolvedVariables | Error {
  try {
    return resolveVariables(variables, { env: process.env, key });
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

async function failUnopened(run: ClaimedRun, err: Error, deps: ClaimWire): Promise<void> {
  const outcome = { status: 'FAIL' as const, attempts: 0, error: err.message, output: '', durationMs: 0 };
  try {
    await deps.link.finishRun(leaseOf(run), outcome, run);
  } catch (failed) {
    // Its lease expires and the reaper gives it back: it fails again then, with the same reason.
    deps.logger.warn({ err: failed, run: run.id }, 'ending a member whose variables cannot be opened failed');
  }
}

/** How often a waiting claim tries again without a wake-up: a lost notification costs at most this. */
const RECLAIM_MS = 5000;

export interface Waiting {
  /** Resolves when the client went away or the server closes: stop waiting. */
  readonly gone: Promise<void>;
  isGone(): boolean;
}

/**
 * Claims; while nothing is claimed, waits for a wake-up (WorkerLink.onRunsWaiting)
 * and claims again, until `waitMs` has passed. Never claims once the client
 * is gone: what it claimed would stay leased to nobody until the lease expired.
 * Before each claim after a wait, `live` says whether the request's key is
 * still neither revoked nor expired; when it is not, 401 and nothing claimed.
 */
export async function claimWaiting(link: WorkerLink, req: ClaimRequest, waitMs: number, waiting: Waiting, live: () => Promise<boolean>): Promise<ClaimedRun[]> {
  const deadline = Date.now() + waitMs;
  for (let waited = false; ; waited = true) {
    if (waiting.isGone()) return [];
    if (waited && !(await live())) throw new RunsetError('unauthorized', 'the key was revoked or expired while the claim waited; nothing was claimed');
    const runs = await link.claimRuns(req);
    const left = deadline - Date.now();
    if (runs.length > 0 || left <= 0) return runs;
    let off: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => {
        off = link.onRunsWaiting(resolve);
        timer = setTimeout(resolve, Math.min(left, RECLAIM_MS));
      }),
      waiting.gone,
    ]);
    off?.();
    clearTimeout(timer);
  }
}

/** Resolves when the server begins to close: waiting claims answer and notice streams end, so that close does not wait on them. */
export interface Closing {
  readonly promise: Promise<void>;
  readonly closed: boolean;
}

export function closingSignal(app: FastifyInstance): Closing {
  let resolve: () => void = () => {};
  const state = { promise: new Promise<void>((r) => (resolve = r)), closed: false };
  app.addHook('preClose', (done) => {
    state.closed = true;
    resolve();
    done();
  });
  return state;
}
