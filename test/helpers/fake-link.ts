/**
 * A WorkerLink in memory, for the scheduler's unit tests: no store, no
 * network. Members live in a map; claims, starts, heartbeats, finishes and
 * releases are fenced by (workerId, claim) as the store fences them. Every call
 * is recorded, and any call can be made to fail or to answer late.
 */
import type { ClaimedRun, PlaywrightTestSpec, RunOutcome, TestSpec } from '../../src/core/types.js';
import type { BatchClaimRequest, BatchWorker, ClaimRequest, FinishedAndClaimed, LeaseRef, NextClaim } from '../../src/store/store.js';
import { STORE_UNAVAILABLE } from '../../src/store/store.js';
import type { WorkerLink } from '../../src/worker-link/link.js';
import { Readable } from 'node:stream';
import { SuiteArchiveGoneError } from '../../src/core/suites.js';
import { startsAtClaim } from '../../src/core/moves.js';

export interface FakeMember {
  id: string;
  setId: string;
  spec: TestSpec;
  batchKey: string | null;
  expectedMs: number;
  status: 'WAITING' | 'RUNNING' | 'SUCCESS' | 'FAIL';
  /** Leased to (workerId, claim); claim 0: nobody. */
  workerId: string | null;
  claim: number;
  outcome?: RunOutcome;
  /** Heartbeats and their attempts. */
  beats: number[];
}

type Method = keyof Omit<WorkerLink, 'artifacts'>;

export function commandSpec(name: string, run: string[] = ['true']): TestSpec {
  return { name, type: 'command', run, cwd: '/', tags: [], timeoutSeconds: 5, retries: 0 };
}

export function playwrightCase(title: string, extra: Partial<PlaywrightTestSpec> = {}): PlaywrightTestSpec {
  return {
    name: `a.spec.ts › ${title}`, type: 'playwright', dir: '/suite', config: '/suite/playwright.config.ts', tags: [],
    timeoutSeconds: 30, retries: 0, timeoutOverride: false, retriesOverride: false,
    case: { entry: 'e2e', project: '', browser: 'chromium', file: 'a.spec.ts', line: 1, titles: [title] },
    ...extra,
  };
}

/** An error the link raises when the service is out of reach (what OutcomeWriter retries). */
export function unavailable(): Error {
  return Object.assign(new Error('the service is unavailable'), { code: STORE_UNAVAILABLE });
}

export class FakeLink implements WorkerLink {
  readonly members = new Map<string, FakeMember>();
  /** Every call, in order: [method, first argument]. */
  readonly calls: [Method, unknown][] = [];
  /** Errors the next calls of a method throw, one each. */
  readonly failures: Partial<Record<Method, Error[]>> = {};
  /** The live workers batchWorkers answers. */
  workers: BatchWorker[] = [];
  /** The suite version each set runs (ClaimedRun.suiteVersion), by set id; absent: the server's own config. */
  readonly suites = new Map<string, string>();
  private claims = 0;
  private readonly waitingListeners = new Set<() => void>();
  private readonly cancelListeners = new Set<(setId: string) => void>();
  /** The suite archives suiteArchive serves, by version id. */
  readonly suiteArchives = new Map<string, Buffer>();
  readonly artifacts = { maxBytes: 1024, put: () => Promise.reject(new Error('no artifacts here')), remove: () => Promise.resolve() };

  /** Adds WAITING members of one set (batched when `batchKey` is given), in claim order. */
  add(setId: string, specs: TestSpec[], batchKey: string | null = null, expectedMs = 1000): FakeMember[] {
    return specs.map((spec) => {
      const m: FakeMember = { id: `${setId}-${this.members.size}`, setId, spec, batchKey, expectedMs, status: 'WAITING', workerId: null, claim: 0, beats: [] };
      this.members.set(m.id, m);
      return m;
    });
  }

  /** Another worker takes the member over: this worker's lease is lost. */
  steal(runId: string): void {
    const m = this.get(runId);
    m.workerId = 'thief';
    m.claim = ++this.claims;
  }

  /** The calls of one method, their first arguments. */
  called<T = unknown>(method: Method): T[] {
    return this.calls.filter(([m]) => m === method).map(([, arg]) => arg as T);
  }

  cancel(setId: string): void {
    for (const listener of this.cancelListeners) listener(setId);
  }

  wake(): void {
    for (const listener of this.waitingListeners) listener();
  }

  // ── WorkerLink ──
  registerWorker(worker: unknown): Promise<void> {
    return this.call('registerWorker', worker, () => undefined);
  }
  heartbeatWorker(id: string): Promise<boolean> {
    return this.call('heartbeatWorker', id, () => true);
  }
  removeWorker(id: string): Promise<void> {
    return this.call('removeWorker', id, () => undefined);
  }
  batchWorkers(setId: string, _batchKey?: string): Promise<BatchWorker[]> {
    return this.call('batchWorkers', setId, () => this.workers);
  }
  waitingWork(setId: string, batchKey: string, limit: number): Promise<number[]> {
    return this.call('waitingWork', setId, () => this.free({ setId, batchKey }).slice(0, limit).map((m) => m.expectedMs));
  }
  claimRuns(req: ClaimRequest): Promise<ClaimedRun[]> {
    return this.call('claimRuns', req, () => this.claim(req));
  }
  claimBatch(req: BatchClaimRequest): Promise<ClaimedRun[]> {
    return this.call('claimBatch', req, () => this.claim(req, { setId: req.setId, batchKey: req.batchKey }));
  }
  startRun(lease: LeaseRef): Promise<boolean> {
    return this.call('startRun', lease, () => this.start(lease));
  }
  heartbeat(lease: LeaseRef, _leaseMs: number, attempts: number): Promise<boolean> {
    return this.call('heartbeat', lease, () => {
      const m = this.held(lease);
      m?.beats.push(attempts);
      return m !== undefined && (m.status === 'RUNNING' || m.status === 'WAITING');
    });
  }
  finishRun(lease: LeaseRef, outcome: RunOutcome): Promise<boolean> {
    return this.call('finishRun', lease, () => this.finish(lease, outcome));
  }
  finishAndClaim(lease: LeaseRef, outcome: RunOutcome, _run: unknown, next: NextClaim): Promise<FinishedAndClaimed> {
    return this.call('finishAndClaim', next, () => {
      const finished = this.finish(lease, outcome);
      const started = next.start ? this.start(next.start) : false;
      return { finished, started, claimed: this.claim(next) };
    });
  }
  releaseRuns(leases: LeaseRef[]): Promise<number> {
    return this.call('releaseRuns', leases, () => {
      let released = 0;
      for (const lease of leases) {
        const m = this.held(lease);
        if (!m || (m.status !== 'RUNNING' && m.status !== 'WAITING')) continue;
        m.status = 'WAITING';
        m.workerId = null;
        released++;
      }
      return released;
    });
  }
  onRunsWaiting(listener: () => void): () => void {
    this.waitingListeners.add(listener);
    return () => this.waitingListeners.delete(listener);
  }
  onSetCancelled(listener: (setId: string) => void): () => void {
    this.cancelListeners.add(listener);
    return () => this.cancelListeners.delete(listener);
  }

  suiteArchive(id: string): Promise<Readable> {
    return this.call('suiteArchive', id, () => {
      const bytes = this.suiteArchives.get(id);
      if (bytes === undefined) throw new SuiteArchiveGoneError(id, 'the fake link has no such version');
      return Readable.from([bytes]);
    });
  }

  // ── the fake store ──
  private async call<T>(method: Method, arg: unknown, answer: () => T): Promise<T> {
    this.calls.push([method, arg]);
    await Promise.resolve(); // a link call is never synchronous
    const failure = this.failures[method]?.shift();
    if (failure) throw failure;
    return answer();
  }

  private get(runId: string): FakeMember {
    const m = this.members.get(runId);
    if (!m) throw new Error(`no member ${runId}`);
    return m;
  }

  private held(lease: LeaseRef): FakeMember | undefined {
    const m = this.members.get(lease.runId);
    return m && m.workerId === lease.workerId && m.claim === lease.claim ? m : undefined;
  }

  private free(where: { setId?: string; batchKey?: string } = {}, skip: readonly string[] = []): FakeMember[] {
    return [...this.members.values()].filter(
      (m) => m.status === 'WAITING' && m.workerId === null && (where.setId === undefined || (m.setId === where.setId && m.batchKey === where.batchKey)) && !skip.includes(m.batchKey ?? ''),
    );
  }

  /** Leases the first free members: singles RUNNING (the last `reserve` of them only leased), batched ones and a suite version's leased and WAITING. */
  private claim(req: ClaimRequest, where?: { setId: string; batchKey: string }): ClaimedRun[] {
    const taken = this.free(where, req.skipBatchKeys).slice(0, req.limit);
    const reserveFrom = taken.length - (req.reserve ?? 0);
    return taken.map((m, i) => {
      m.workerId = req.workerId;
      m.claim = ++this.claims;
      if (startsAtClaim({ batchKey: m.batchKey, suiteVersion: this.suites.get(m.setId) }) && i < reserveFrom) m.status = 'RUNNING';
      return { id: m.id, setId: m.setId, env: 'staging', spec: m.spec, expectedMs: m.expectedMs, variables: {}, claim: m.claim, workerId: req.workerId, batchKey: m.batchKey, suiteVersion: this.suites.get(m.setId) ?? null };
    });
  }

  private start(lease: LeaseRef): boolean {
    const m = this.held(lease);
    if (!m) return false;
    if (m.status === 'WAITING') m.status = 'RUNNING';
    return m.status === 'RUNNING';
  }

  private finish(lease: LeaseRef, outcome: RunOutcome): boolean {
    const m = this.held(lease);
    if (!m || (m.status !== 'RUNNING' && m.status !== 'WAITING')) return m?.outcome !== undefined && m.workerId === lease.workerId;
    m.status = outcome.status;
    m.outcome = outcome;
    return true;
  }
}
