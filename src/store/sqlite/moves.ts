/**
 * The SQLite store's member moves: claims (of any member, or the rest of a
 * batch), starts of reserved members, outcomes, releases and reaping, each run
 * inside a transaction its caller (./claims.ts) opens, each carrying its set's
 * counts, status and timestamps along (./set-moves.ts). What each move writes
 * is both stores' SQL (../sql/member-moves.ts); here is how SQLite finds the
 * rows and runs it: prepared statements, one member at a time (SQLite allows no
 * UPDATE inside a WITH). The PostgreSQL store runs the same SQL in
 * ../postgres/moves.ts; the property test holds both to src/core/moves.ts.
 *
 * Reserved = leased (worker_id, claims, lease_expires_at set) but still WAITING
 * in the set's counts: a batch of 50 Playwright cases shows 50 WAITING until
 * Playwright begins each one, so counts are live rather than jumping to RUNNING.
 */
import type Database from 'better-sqlite3';
import type { RunState } from '../../core/states.js';
import type { ClaimedRun, RunOutcome } from '../../core/types.js';
import { casesOf, skippedOf, WORKER_LOST, type BatchClaimRequest, type ClaimRequest, type LeaseRef, type ReapResult } from '../claims.js';
import { toClaimed } from '../rows.js';
import { caseTestNameSql, historyCases } from '../../core/result-cases.js';
import type { SqliteArtifacts } from './artifacts.js';
import type { MoveCounts } from './set-moves.js';
import { now, TABLES } from './statements.js';
import { failsSetSql } from '../sql/set-rollup.js';
import { SQLITE } from '../sql/dialect.js';
import { claimMember, fenced, finishMember, heartbeatMember, reapMember, releaseMember, renewLease, startMember } from '../sql/member-moves.js';
import { pickBatchSql, pickWaitingSql } from '../sql/claim-picks.js';
import { limitedSetsSql } from '../queue.js';

/** The lease fence (../sql/member-moves.ts) over the named parameters of fenceOf. */
const FENCED = fenced({ id: '@id', worker: '@worker_id', claims: '@claims' });

/** The function a move calls to refuse a move the rules forbid (registered on the connection below). */
const REFUSE_MOVE = 'refuse_move';

/** SQLite's RETURNING names the written row by its table, never by its alias. */
const RETURNED = SQLITE.returnedOf('r', 'test_runs');

/** A leased member as a finish or the reaper reads it: its state and its set. */
interface HeldRow {
  status: RunState;
  set_id: string;
}

/** What a member's end returns: whether it fails its set (failsSetSql, SQLite's 0 or 1). */
interface EndedRow {
  fails: number;
}

/** What leasing a member returns: its new claim number, spec (JSON), batch key and expected duration. */
interface ReservedRow {
  claims: number;
  spec: string;
  batch_key: string | null;
  expected_ms: number | null;
}

/** What a claim needs of a member's set: its environment, variables (as stored JSON) and suite version. */
interface SetOfClaim {
  env: string;
  variables: string;
  suite: string | null;
}

type Statement =
  | 'anyLimited' | 'batchRuns' | 'claimRun' | 'setOfClaim' | 'startRun'
  | 'heartbeat' | 'renewLease' | 'leaseStatus' | 'finishRun' | 'insertCase' | 'holdsOutcome' | 'releaseRun' | 'expiredRuns' | 'reapRun';

/** A claim's pick of waiting members, plain or narrowed (ClaimRequest's skipBatchKeys, setId, envs). */
interface Picks {
  plain: Database.Statement;
  narrowed: Database.Statement;
}

export class SqliteMoves {
  private readonly sql: Record<Statement, Database.Statement>;
  /** The picks that leave queued sets out (`queues`), and those for when no set can be queued (`none`): see claim. */
  private readonly picks: Record<'queues' | 'none', Picks>;

  constructor(
    db: Database.Database,
    private readonly moveSet: MoveCounts,
    private readonly artifacts: SqliteArtifacts,
  ) {
    // What a move calls to refuse a move the rules forbid (finishMember): it throws, and the transaction rolls back.
    db.function(REFUSE_MOVE, (message: unknown) => {
      throw new Error(String(message));
    });
    // The narrowed pick is apart so that the usual claim stays as simple.
    const picks = (queues: boolean): Picks => ({
      plain: db.prepare(pickWaitingSql(SQLITE, TABLES, '@limit', undefined, queues)),
      narrowed: db.prepare(pickWaitingSql(SQLITE, TABLES, '@limit', { skip: '@skip', set: '@set_id', envs: '@envs' }, queues)),
    });
    this.picks = { queues: picks(true), none: picks(false) };
    this.sql = {
      anyLimited: db.prepare(`${limitedSetsSql(TABLES.sets, '1')} LIMIT 1`),
      batchRuns: db.prepare(pickBatchSql(SQLITE, TABLES, 'id', { set: '@set_id', batchKey: '@batch_key', limit: '@limit', lock: true })),
      // A claim that starts its member (@starts) leaves one with a batch key reserved: leased but still WAITING, until its case begins.
      claimRun: db.prepare(`
        UPDATE test_runs AS r SET ${claimMember(SQLITE, { starts: 'r.batch_key IS NULL AND @starts', worker: '@worker_id', leaseMs: '@lease_ms' })}
        WHERE r.id = @id AND r.status = 'WAITING' AND r.worker_id IS NULL
        RETURNING claims, spec, batch_key, expected_ms`),
      setOfClaim: db.prepare('SELECT env, variables, suite FROM test_run_sets WHERE id = ?'),
      startRun: db.prepare(`
        UPDATE test_runs AS r SET ${startMember(SQLITE)}
        WHERE r.id = @id AND r.worker_id = @worker_id AND r.claims = @claims AND r.status = 'WAITING'
        RETURNING set_id`),
      heartbeat: db.prepare(`UPDATE test_runs AS r SET ${heartbeatMember(SQLITE, { leaseMs: '@lease_ms', attempts: '@attempts' })} WHERE ${FENCED}`),
      renewLease: db.prepare(`UPDATE test_runs AS r SET ${renewLease(SQLITE, '@lease_ms')} WHERE ${FENCED}`),
      leaseStatus: db.prepare(`SELECT status, set_id FROM test_runs AS r WHERE ${FENCED}`),
      finishRun: db.prepare(`
        UPDATE test_runs AS r SET ${finishMember(SQLITE, {
          refuse: REFUSE_MOVE, status: '@status', attempts: '@attempts', error: '@error', output: '@output',
          durationMs: '@duration_ms', skipped: '@skipped', resultCases: '@result_cases',
        })}
        WHERE ${FENCED}
        RETURNING ${failsSetSql('outcome', RETURNED, 'status', 'attempts')} AS fails`),
      // The cases of its result that history counts (src/core/result-cases.ts), as runs of their own tests.
      insertCase: db.prepare(`
        INSERT INTO test_run_cases (run_id, position, env, name, set_id, status, duration_ms, error, ended_at)
        SELECT id, @position, env, ${caseTestNameSql('name', '@name')}, set_id, @status, @duration_ms, @error, ended_at FROM test_runs WHERE id = @id`),
      // A finish retried after its first answer was lost: did that one write this outcome under this claim?
      // (A member the reaper failed under the same claim holds the reaper's outcome, not ours.)
      holdsOutcome: db.prepare(`
        SELECT 1 FROM test_runs
        WHERE id = @id AND claims = @claims AND worker_id IS NULL AND status = @status AND attempts = @attempts
          AND error IS @error AND duration_ms = @duration_ms`),
      releaseRun: db.prepare(`UPDATE test_runs AS r SET ${releaseMember(SQLITE)} WHERE ${FENCED}`),
      expiredRuns: db.prepare(`
        SELECT id, set_id, status, claims FROM test_runs
        WHERE lease_expires_at < ? AND status IN ('WAITING', 'RUNNING')`),
      reapRun: db.prepare(`
        UPDATE test_runs AS r SET ${reapMember(SQLITE, { maxLostLeases: '@max_lost_leases', error: '@error' })}
        WHERE r.id = @id AND r.claims = @claims AND r.status IN ('WAITING', 'RUNNING')
        RETURNING status, ${failsSetSql('lost', RETURNED, 'status', 'attempts')} AS fails`),
    };
  }

  /**
   * Leases up to `limit` waiting members: the first `limit − reserve` start
   * unless they have a batch key or their set runs a suite version
   * (startsAtClaim, src/core/moves.ts), the rest are reserved.
   */
  claim(req: ClaimRequest): ClaimedRun[] {
    const at = now();
    const starting = req.limit - (req.reserve ?? 0);
    const skip = req.skipBatchKeys ?? [];
    const filtered = skip.length > 0 || req.setId !== undefined || req.envs !== undefined;
    // No unfinished set with a limit, no queued set: the pick without the queue's sub-select (../queue.ts, limitedSetsSql).
    const picks = this.sql.anyLimited.get() === undefined ? this.picks.none : this.picks.queues;
    const waiting = filtered
      ? picks.narrowed.all({ skip: JSON.stringify(skip), set_id: req.setId ?? null, envs: req.envs ? JSON.stringify(req.envs) : null, limit: req.limit })
      : picks.plain.all({ limit: req.limit });
    const rows = waiting as { id: string; set_id: string }[];
    const sets = new Map<string, SetOfClaim>(); // the claimed members' sets, each read once
    const out: ClaimedRun[] = [];
    for (const [i, row] of rows.entries()) {
      let set = sets.get(row.set_id);
      if (set === undefined) {
        set = this.setOfClaim(row.set_id);
        if (set === undefined) throw new Error(`member ${row.id} has no set ${row.set_id}`); // the foreign key forbids it
        sets.set(row.set_id, set);
      }
      // A member of a set that runs a suite version is reserved: it starts when its test does (startsAtClaim).
      const starts = i < starting && set.suite === null;
      const taken = this.take(row.id, req.workerId, req.leaseMs, starts, at);
      if (!taken) continue;
      if (starts && taken.batch_key === null) this.moveSet(row.set_id, 'WAITING', 'RUNNING', at); // else reserved: still WAITING
      out.push(claimedOf(row.id, row.set_id, taken, set, req.workerId));
    }
    return out;
  }

  /** Reserves up to `limit` more unleased WAITING members of one set with one batch key, oldest first. */
  claimBatch(req: BatchClaimRequest): ClaimedRun[] {
    if (req.limit <= 0) return [];
    const rows = this.sql.batchRuns.all({ set_id: req.setId, batch_key: req.batchKey, limit: req.limit }) as { id: string }[];
    const set = this.setOfClaim(req.setId);
    const out: ClaimedRun[] = [];
    for (const row of rows) {
      const taken = this.take(row.id, req.workerId, req.leaseMs, false, now());
      if (taken && set !== undefined) out.push(claimedOf(row.id, req.setId, taken, set, req.workerId));
    }
    return out;
  }

  /** A reserved member began at `at`: WAITING → RUNNING; false when the lease is not ours. */
  start(lease: LeaseRef, at: string): boolean {
    const row = this.sql.startRun.get({ id: lease.runId, worker_id: lease.workerId, claims: lease.claim, at }) as { set_id: string } | undefined;
    if (!row) return false;
    this.moveSet(row.set_id, 'WAITING', 'RUNNING', at);
    return true;
  }

  /**
   * Starts a member reserved under `lease` and renews the lease; already
   * RUNNING under it: true, only the lease renewed.
   */
  begin(lease: LeaseRef, leaseMs: number): boolean {
    const fence = fenceOf(lease);
    const held = this.sql.leaseStatus.get(fence) as { status: RunState } | undefined;
    if (!held) return false;
    if (held.status === 'WAITING') this.start(lease, now());
    this.sql.renewLease.run({ ...fence, now_ms: Date.now(), lease_ms: leaseMs, at: now() });
    return true;
  }

  /** Extends the lease and records attempts so far; false when the lease is not ours. */
  heartbeat(lease: LeaseRef, leaseMs: number, attempts: number): boolean {
    return this.sql.heartbeat.run({ ...fenceOf(lease), now_ms: Date.now(), lease_ms: leaseMs, attempts, at: now() }).changes === 1;
  }

  /**
   * Ends a member under its lease, with its artifacts; false when the lease is
   * not ours. Repeated with the same outcome under the same lease, true and
   * nothing written: a retry whose first try committed.
   */
  finish(lease: LeaseRef, outcome: RunOutcome): boolean {
    const at = now();
    const fence = fenceOf(lease);
    const written = { status: outcome.status, attempts: outcome.attempts, error: outcome.error, duration_ms: Math.round(outcome.durationMs) };
    const held = this.sql.leaseStatus.get(fence) as HeldRow | undefined;
    if (!held) return this.sql.holdsOutcome.get({ id: lease.runId, claims: lease.claim, ...written }) !== undefined;
    // Read under the same fence inside this write transaction: the update matches.
    const ended = this.sql.finishRun.get({ ...fence, ...written, output: outcome.output, skipped: skippedOf(outcome) ? 1 : 0, result_cases: casesOf(outcome), at }) as EndedRow;
    for (const c of historyCases(outcome.cases)) {
      this.sql.insertCase.run({ id: lease.runId, position: c.position, name: c.name, status: c.result, duration_ms: c.durationMs, error: c.error });
    }
    this.moveSet(held.set_id, held.status, outcome.status, at, ended.fails === 1);
    this.artifacts.insert(lease.runId, held.set_id, outcome.artifacts ?? [], at);
    return true;
  }

  /** Gives leased members back to WAITING, unleased; returns how many were ours. */
  release(leases: readonly LeaseRef[]): number {
    const at = now();
    let n = 0;
    for (const lease of leases) {
      const fence = fenceOf(lease);
      const held = this.sql.leaseStatus.get(fence) as { status: RunState; set_id: string } | undefined;
      if (!held) continue;
      // Read under the same fence inside this write transaction: the update matches.
      this.sql.releaseRun.run({ ...fence, at });
      if (held.status === 'RUNNING') this.moveSet(held.set_id, 'RUNNING', 'WAITING', at);
      n++;
    }
    return n;
  }

  /** Expired leases back to WAITING, or FAIL with WORKER_LOST at the `maxLostLeases`-th (reapMember). */
  reap(maxLostLeases: number): ReapResult {
    const at = now();
    const expired = this.sql.expiredRuns.all(Date.now()) as (HeldRow & { id: string; claims: number })[];
    const res: ReapResult = { requeued: 0, failed: 0 };
    for (const run of expired) {
      // Read inside this write transaction: the update matches.
      const reaped = this.sql.reapRun.get({ id: run.id, claims: run.claims, max_lost_leases: maxLostLeases, error: WORKER_LOST, at }) as EndedRow & { status: RunState };
      if (reaped.status !== run.status) this.moveSet(run.set_id, run.status, reaped.status, at, reaped.fails === 1); // a reserved one requeued stays WAITING
      if (reaped.status === 'WAITING') res.requeued++;
      else res.failed++;
    }
    return res;
  }

  /**
   * Leases an unleased WAITING member, starting it when `starts` unless it has a
   * batch key; undefined when someone else holds it.
   */
  private take(id: string, workerId: string, leaseMs: number, starts: boolean, at: string): ReservedRow | undefined {
    return this.sql.claimRun.get({ id, worker_id: workerId, now_ms: Date.now(), lease_ms: leaseMs, starts: starts ? 1 : 0, at }) as ReservedRow | undefined;
  }

  /** A set's environment and variables, or undefined for no such set. */
  private setOfClaim(setId: string): SetOfClaim | undefined {
    return this.sql.setOfClaim.get(setId) as SetOfClaim | undefined;
  }
}

/** A member just leased to `workerId`, as claims hand it out. */
function claimedOf(id: string, setId: string, taken: ReservedRow, set: SetOfClaim, workerId: string): ClaimedRun {
  return toClaimed(
    {
      id, set_id: setId, env: set.env, claims: taken.claims, batch_key: taken.batch_key, expected_ms: taken.expected_ms, suite: set.suite,
      spec: JSON.parse(taken.spec), variables: JSON.parse(set.variables),
    },
    workerId,
  );
}

/** The named parameters that fence a write to the lease's holder. */
function fenceOf(lease: LeaseRef): { id: string; worker_id: string; claims: number } {
  return { id: lease.runId, worker_id: lease.workerId, claims: lease.claim };
}
