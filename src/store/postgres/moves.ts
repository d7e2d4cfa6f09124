/**
 * The PostgreSQL store's member moves: claims (of any member, or the rest of a
 * batch), starts, heartbeats, outcomes, releases and reaping, one named
 * statement each (the rules of ./statements.ts hold), its text built once per
 * store. What each move writes on its member is both stores' SQL
 * (../sql/member-moves.ts), and how it carries to its set the roll-up both share
 * (../sql/set-rollup.ts); here is how PostgreSQL finds the rows and runs it. The
 * SQLite store runs the same SQL in ../sqlite/moves.ts; the property test holds
 * both to src/core/moves.ts.
 *
 * - Every worker write is fenced by (id, worker_id, claims) on a leased member
 *   (RUNNING, or reserved: WAITING with a lease, see claimCtes): a worker whose
 *   lease was taken over matches no row and changes nothing.
 * - A move and its set's new counts, status and timestamps are one statement:
 *   one round trip, and the set row is locked only while the statement runs,
 *   never across a client's round trips.
 */
import type { RunOutcome } from '../../core/types.js';
import { casesOf, skippedOf, type BatchClaimRequest, type ClaimRequest, type LeaseRef, type NextClaim } from '../claims.js';
import { caseTestNameSql, historyCases } from '../../core/result-cases.js';
import type { Queryable } from './connection.js';
import { FAILS_NOTHING, failsSetSql, setRollUpCtes } from '../sql/set-rollup.js';
import { POSTGRES } from '../sql/dialect.js';
import { claimMember, fenced, finishMember, heartbeatMember, reapMember, releaseMember, renewLease, reserveMember, startMember } from '../sql/member-moves.js';
import { pickBatchSql, pickWaitingSql } from '../sql/claim-picks.js';
import type { Names } from './statements.js';

const FENCED = fenced({ id: '$1', worker: '$2', claims: '$3' });
const NOW = POSTGRES.now;

/** A claimed member with its set's variables, as claims return it. */
export interface ClaimRow {
  id: string;
  set_id: string;
  spec: unknown;
  variables: unknown;
  claims: number;
  batch_key: string | null;
  env: string;
  expected_ms: number | null;
  suite: string | null;
}

/**
 * The CTEs `picked` and `claimed`: take up to `limit` unleased waiting members,
 * oldest first, skipping rows another claimer holds, and lease them to `worker`
 * until the database's now() + leaseMs. The first `limit − reserve` of them start
 * (RUNNING) unless they have a batch key or their set runs a suite version
 * (startsAtClaim, src/core/moves.ts); the others are reserved rather than
 * started: they stay WAITING. (`ranked` numbers the picked rows: PostgreSQL
 * allows no window function beside FOR UPDATE.) Members of a set queued behind
 * its environment's limit are left alone (../queue.ts). Arguments are the
 * statement's placeholders.
 */
function claimCtes(n: Names, p: { worker: string; limit: string; reserve: string; leaseMs: string; skip: string; set: string; envs: string }): string {
  return `
      picked AS (${pickWaitingSql(POSTGRES, n, p.limit, { skip: p.skip, set: p.set, envs: p.envs })}
      ), ranked AS (
        SELECT p.id, row_number() OVER (ORDER BY p.seq) <= ${p.limit} - ${p.reserve} AND s.suite IS NULL AS starts
        FROM picked p JOIN ${n.sets} s ON s.id = p.set_id
      ), claimed AS (
        UPDATE ${n.runs} AS r SET ${claimMember(POSTGRES, { starts: 'r.batch_key IS NULL AND ranked.starts', worker: p.worker, leaseMs: p.leaseMs })}
        FROM ranked WHERE r.id = ranked.id
        RETURNING r.id, r.set_id, r.spec, r.claims, r.seq, r.batch_key, r.status, r.expected_ms
      )`;
}

/** Claims up to `limit` members (see claimCtes), moving their sets with them. */
function claimText(n: Names): string {
  return `
      WITH ${claimCtes(n, { worker: '$1', limit: '$2', reserve: '$3', leaseMs: '$4', skip: '$5', set: '$6', envs: '$7' })}, moved AS (
        SELECT set_id, 'WAITING' AS previous, status AS next, ${FAILS_NOTHING} FROM claimed
      ), ${setRollUpCtes(POSTGRES, n.sets)}
      SELECT c.id, c.set_id, c.spec, s.variables, s.env, s.suite, c.claims, c.batch_key, c.expected_ms
      FROM claimed c JOIN ${n.sets} s ON s.id = c.set_id
      ORDER BY c.seq`;
}

/** A reserved member began: RUNNING under the same lease, at the database's clock moved back by what the worker measured ($4 ms). */
function startText(n: Names): string {
  // The two clocks are never mixed.
  const began = `(${NOW} - $4::integer * interval '1 millisecond')`;
  return `
      WITH started AS (
        UPDATE ${n.runs} AS r SET ${startMember(POSTGRES, began)}
        WHERE r.id = $1 AND r.worker_id = $2 AND r.claims = $3 AND r.status = 'WAITING'
        RETURNING r.set_id
      ), moved AS (
        SELECT set_id, 'WAITING' AS previous, 'RUNNING' AS next, ${FAILS_NOTHING} FROM started
      ), ${setRollUpCtes(POSTGRES, n.sets, began)}
      SELECT set_id FROM started`;
}

/**
 * The CTEs `held` and `finished` (and `kept` when the outcome has artifacts):
 * end the member leased by ($1, $2, $3) with the outcome in $4–$10 and its cases in
 * history ($11–$15), recording its artifacts ($16–$20) with it. Nothing matches when the lease is not ours. A
 * reserved member (still WAITING) never began, so it may only end FAIL: a
 * SUCCESS for it is refused, and the whole statement rolls back.
 */
function finishCtes(n: Names, withArtifacts: boolean): string {
  const held = `
      held AS (
        SELECT r.id, r.status FROM ${n.runs} AS r WHERE ${FENCED} FOR UPDATE
      ), finished AS (
        UPDATE ${n.runs} AS r SET ${finishMember(POSTGRES, {
          refuse: n.refuseMove, status: '$4', attempts: '$5', error: '$6', output: '$7', durationMs: '$8', skipped: '$9', resultCases: '$10',
        })}
        FROM held WHERE r.id = held.id
        RETURNING r.id, r.set_id, r.env, r.name, r.ended_at, held.status AS previous, r.status AS next, ${failsSetSql('outcome', 'r', 'r.status', 'r.attempts')} AS fails
      ), cased AS (
        -- The cases of its result that history counts (src/core/result-cases.ts), as runs of their own tests.
        INSERT INTO ${n.cases} (run_id, position, env, name, set_id, status, duration_ms, error, ended_at)
        SELECT f.id, u.position, f.env, ${caseTestNameSql('f.name', 'u.name')}, f.set_id, u.status, u.duration_ms, u.error, f.ended_at
        FROM finished AS f, unnest($11::integer[], $12::text[], $13::text[], $14::integer[], $15::text[]) AS u(position, name, status, duration_ms, error)
        RETURNING run_id
      )`;
  if (!withArtifacts) return held;
  return `${held}, kept AS (
        INSERT INTO ${n.artifacts} (id, run_id, set_id, name, content_type, size, location, created_at)
        SELECT u.id, f.id, f.set_id, u.name, u.content_type, u.size, u.location, ${NOW}
        FROM finished AS f,
          unnest($16::text[], $17::text[], $18::text[], $19::bigint[], $20::text[]) AS u(id, name, content_type, size, location)
        RETURNING id
      )`;
}

/** How many placeholders a finish takes: the outcome and its cases, and its artifacts when it has some (finishCtes). */
function finishArity(withArtifacts: boolean): number {
  return withArtifacts ? 20 : 15;
}

/** Ends a member under its lease (see finishCtes). */
function finishText(n: Names, withArtifacts: boolean): string {
  return `
      WITH ${finishCtes(n, withArtifacts)}, moved AS (
        SELECT set_id, previous, next, fails FROM finished
      ), ${setRollUpCtes(POSTGRES, n.sets)}
      SELECT id FROM finished`;
}

/**
 * Ends a member, starts the member the slot reserved for its next turn and
 * claims more, in one statement (see PostgresMoves.finishAndClaim); the claim's
 * placeholders follow the finish's.
 */
function finishAndClaimText(n: Names, withArtifacts: boolean): string {
  const [limit, reserve, leaseMs, worker, startId, startWorker, startClaim, skip, set, envs] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => `$${finishArity(withArtifacts) + i}`) as [
    string, string, string, string, string, string, string, string, string, string,
  ];
  return `
      WITH ${finishCtes(n, withArtifacts)}, to_start AS (
        SELECT r.id, r.status FROM ${n.runs} AS r
        WHERE r.id = ${startId} AND r.id <> $1 AND r.worker_id = ${startWorker} AND r.claims = ${startClaim}::integer AND r.status IN ('WAITING', 'RUNNING')
        FOR UPDATE
      ), begun AS (
        UPDATE ${n.runs} AS r SET ${startMember(POSTGRES)}, ${renewLease(POSTGRES, leaseMs)}
        FROM to_start WHERE r.id = to_start.id
        RETURNING r.set_id, to_start.status AS previous
      ), ${claimCtes(n, { worker, limit, reserve, leaseMs, skip, set, envs })}, moved AS (
        SELECT set_id, previous, next, fails FROM finished
        UNION ALL SELECT set_id, previous, 'RUNNING', false FROM begun
        UNION ALL SELECT set_id, 'WAITING', status, false FROM claimed
      ), ${setRollUpCtes(POSTGRES, n.sets)}
      SELECT f.finished, f.started, c.id, c.set_id, c.spec, s.variables, s.env, s.suite, c.claims, c.batch_key, c.expected_ms
      FROM (SELECT EXISTS (SELECT 1 FROM finished) AS finished, EXISTS (SELECT 1 FROM begun) AS started) AS f
        LEFT JOIN (claimed c JOIN ${n.sets} s ON s.id = c.set_id) ON true
      ORDER BY c.seq`;
}

/** Gives leased members back to WAITING (no lost lease counted). */
function releaseText(n: Names): string {
  return `
      WITH mine AS (
        SELECT r.id, r.status FROM ${n.runs} AS r
        JOIN unnest($1::text[], $2::text[], $3::integer[]) AS l(id, worker_id, claims)
          ON r.id = l.id AND r.worker_id = l.worker_id AND r.claims = l.claims
        WHERE r.status IN ('WAITING', 'RUNNING')
        ORDER BY r.id FOR UPDATE OF r
      ), released AS (
        UPDATE ${n.runs} AS r SET ${releaseMember(POSTGRES)}
        FROM mine WHERE r.id = mine.id
        RETURNING r.set_id, mine.status AS previous, r.status AS next
      ), moved AS (
        SELECT set_id, previous, next, ${FAILS_NOTHING} FROM released
      ), ${setRollUpCtes(POSTGRES, n.sets)}
      SELECT count(*)::integer AS released FROM released`;
}

/**
 * Members whose lease expired by the database's clock: back to WAITING, or FAIL
 * with $2 once this is their $1-th lost lease (reapMember). Rows a finisher holds
 * right now are skipped: that worker is alive.
 */
function reapText(n: Names): string {
  return `
      WITH expired AS (
        SELECT id, status FROM ${n.runs}
        WHERE lease_expires_at < now() AND status IN ('WAITING', 'RUNNING')
        ORDER BY id FOR UPDATE SKIP LOCKED
      ), reaped AS (
        UPDATE ${n.runs} AS r SET ${reapMember(POSTGRES, { maxLostLeases: '$1', error: '$2' })}
        FROM expired WHERE r.id = expired.id
        RETURNING r.set_id, expired.status AS previous, r.status AS next, ${failsSetSql('lost', 'r', 'r.status', 'r.attempts')} AS fails
      ), moved AS (
        SELECT set_id, previous, next, fails FROM reaped
      ), ${setRollUpCtes(POSTGRES, n.sets)}
      SELECT count(*) FILTER (WHERE next = 'WAITING')::integer AS requeued,
             count(*) FILTER (WHERE next = 'FAIL')::integer AS failed
      FROM reaped`;
}

/** Reserves up to $4 unleased waiting members of one set ($2) with one batch key ($3): leased to $1, still WAITING. */
function claimBatchText(n: Names): string {
  return `
      WITH picked AS (${pickBatchSql(POSTGRES, n, 'id', { set: '$2', batchKey: '$3', limit: '$4', lock: true })}
      ), claimed AS (
        UPDATE ${n.runs} AS r SET ${reserveMember(POSTGRES, { worker: '$1', leaseMs: '$5' })}
        FROM picked WHERE r.id = picked.id
        RETURNING r.id, r.set_id, r.spec, r.claims, r.seq, r.batch_key, r.expected_ms
      )
      SELECT c.id, c.set_id, c.spec, s.variables, s.env, s.suite, c.claims, c.batch_key, c.expected_ms
      FROM claimed c JOIN ${n.sets} s ON s.id = c.set_id
      ORDER BY c.seq`;
}

/** $11–$15: the cases history counts, a column each. */
function caseColumns(outcome: RunOutcome): unknown[] {
  const cases = historyCases(outcome.cases);
  return [cases.map((c) => c.position), cases.map((c) => c.name), cases.map((c) => c.result), cases.map((c) => c.durationMs), cases.map((c) => c.error)];
}

/** The finish's parameters; the statement (and its prepared name) differs with and without artifacts. */
function finishParams(lease: LeaseRef, outcome: RunOutcome): { values: unknown[]; withArtifacts: boolean } {
  const artifacts = outcome.artifacts ?? [];
  const values: unknown[] = [
    lease.runId, lease.workerId, lease.claim,
    outcome.status, outcome.attempts, outcome.error, outcome.output, Math.round(outcome.durationMs), skippedOf(outcome), casesOf(outcome),
    ...caseColumns(outcome),
  ];
  if (artifacts.length === 0) return { values, withArtifacts: false };
  values.push(
    artifacts.map((a) => a.id),
    artifacts.map((a) => a.name),
    artifacts.map((a) => a.contentType),
    artifacts.map((a) => a.size),
    artifacts.map((a) => a.location),
  );
  return { values, withArtifacts: true };
}

/** A statement prepared by name on each pooled connection: its name and its text. */
interface Named {
  name: string;
  text: string;
}

/** A statement for an outcome without artifacts and one for an outcome with some. */
type ByArtifacts = Record<'without' | 'with', Named>;

/** The move statements of one store (one schema), built once; each move runs one on the Queryable it is given. */
export class PostgresMoves {
  private readonly sql: {
    claim: Named; claimBatch: Named; start: Named; heartbeat: Named; holdsOutcome: Named; release: Named; reap: Named;
    finish: ByArtifacts; finishAndClaim: ByArtifacts;
  };

  constructor(n: Names) {
    const byArtifacts = (name: string, text: (n: Names, withArtifacts: boolean) => string): ByArtifacts => ({
      without: { name, text: text(n, false) },
      with: { name: `${name}+artifacts`, text: text(n, true) },
    });
    this.sql = {
      claim: { name: 'runset.claimMembers', text: claimText(n) },
      claimBatch: { name: 'runset.claimBatchMembers', text: claimBatchText(n) },
      start: { name: 'runset.startMember', text: startText(n) },
      heartbeat: { name: 'runset.heartbeat', text: `UPDATE ${n.runs} AS r SET ${heartbeatMember(POSTGRES, { leaseMs: '$4', attempts: '$5' })} WHERE ${FENCED}` },
      // A finish retried after its first try committed and the answer was lost. (A member the
      // reaper failed under the same claim holds the reaper's outcome.)
      holdsOutcome: {
        name: 'runset.holdsOutcome',
        text: `
          SELECT 1 FROM ${n.runs} AS r
          WHERE r.id = $1 AND r.claims = $2 AND r.worker_id IS NULL AND r.status = $3 AND r.attempts = $4
            AND r.error IS NOT DISTINCT FROM $5 AND r.duration_ms = $6`,
      },
      release: { name: 'runset.releaseMembers', text: releaseText(n) },
      reap: { name: 'runset.reapMembers', text: reapText(n) },
      finish: byArtifacts('runset.finishMember', finishText),
      finishAndClaim: byArtifacts('runset.finishAndClaimMembers', finishAndClaimText),
    };
  }

  /** Claims up to `limit` members (see claimCtes), moving their sets with them. */
  async claim(q: Queryable, req: ClaimRequest): Promise<ClaimRow[]> {
    const { rows } = await q.query<ClaimRow>({
      ...this.sql.claim,
      values: [req.workerId, req.limit, req.reserve ?? 0, req.leaseMs, req.skipBatchKeys ?? [], req.setId ?? null, req.envs ?? null],
    });
    return rows;
  }

  /** Reserves up to `limit` unleased waiting members of one set with one batch key: leased, still WAITING. */
  async claimBatch(q: Queryable, req: BatchClaimRequest): Promise<ClaimRow[]> {
    const { rows } = await q.query<ClaimRow>({ ...this.sql.claimBatch, values: [req.workerId, req.setId, req.batchKey, req.limit, req.leaseMs] });
    return rows;
  }

  /** A reserved member began `sinceMs` ago: RUNNING under the same lease. False when the lease is not ours. */
  async start(q: Queryable, lease: LeaseRef, sinceMs: number): Promise<boolean> {
    const { rows } = await q.query({ ...this.sql.start, values: [lease.runId, lease.workerId, lease.claim, Math.max(0, Math.round(sinceMs))] });
    return rows.length === 1;
  }

  async heartbeat(q: Queryable, lease: LeaseRef, leaseMs: number, attempts: number): Promise<boolean> {
    const res = await q.query({ ...this.sql.heartbeat, values: [lease.runId, lease.workerId, lease.claim, leaseMs, attempts] });
    return res.rowCount === 1;
  }

  /** Ends a member under its lease (see finishCtes). False when the lease is not ours: nothing is written. */
  async finish(q: Queryable, lease: LeaseRef, outcome: RunOutcome): Promise<boolean> {
    const finish = finishParams(lease, outcome);
    const { rows } = await q.query({ ...this.sql.finish[finish.withArtifacts ? 'with' : 'without'], values: finish.values });
    return rows.length === 1;
  }

  /** Whether the member already holds this outcome, written under this lease. */
  async holdsOutcome(q: Queryable, lease: LeaseRef, outcome: RunOutcome): Promise<boolean> {
    const { rows } = await q.query({
      ...this.sql.holdsOutcome,
      values: [lease.runId, lease.claim, outcome.status, outcome.attempts, outcome.error, Math.round(outcome.durationMs)],
    });
    return rows.length === 1;
  }

  /**
   * Ends a member, starts the member the slot reserved for its next turn (when
   * `next.start` is given) and claims up to `next.limit` more, in one statement: a
   * worker slot pays one round trip and one commit between two members. Moves of
   * every kind are carried to their sets together, so a set row they share is
   * updated once. `finished` is false when the lease was not ours; `started`, when
   * the reserved member's lease was not ours; the claim happens either way.
   */
  async finishAndClaim(q: Queryable, lease: LeaseRef, outcome: RunOutcome, next: NextClaim): Promise<{ finished: boolean; started: boolean; claimed: ClaimRow[] }> {
    const finish = finishParams(lease, outcome);
    const { rows } = await q.query<ClaimRow & { finished: boolean; started: boolean }>({
      ...this.sql.finishAndClaim[finish.withArtifacts ? 'with' : 'without'],
      values: [
        ...finish.values,
        next.limit, next.reserve ?? 0, next.leaseMs, next.workerId,
        next.start?.runId ?? null, next.start?.workerId ?? null, next.start?.claim ?? null,
        next.skipBatchKeys ?? [], next.setId ?? null, next.envs ?? null,
      ],
    });
    const first = rows[0] as { finished: boolean; started: boolean } | undefined;
    return { finished: first?.finished ?? false, started: first?.started ?? false, claimed: rows.filter((r) => r.id !== null) };
  }

  /** Gives leased members back to WAITING (no lost lease counted); returns how many were released. */
  async release(q: Queryable, leases: LeaseRef[]): Promise<number> {
    const { rows } = await q.query({ ...this.sql.release, values: [leases.map((l) => l.runId), leases.map((l) => l.workerId), leases.map((l) => l.claim)] });
    return (rows[0] as { released: number }).released;
  }

  /** Expired leases back to WAITING, or FAIL with `error` at the `maxLostLeases`-th (see reapText). */
  async reap(q: Queryable, maxLostLeases: number, error: string): Promise<{ requeued: number; failed: number }> {
    const { rows } = await q.query<{ requeued: number; failed: number }>({ ...this.sql.reap, values: [maxLostLeases, error] });
    return rows[0] as { requeued: number; failed: number };
  }
}
