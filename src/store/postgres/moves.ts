/**
 * The PostgreSQL store's member moves: claims (of any member, or the rest of a
 * batch), starts, heartbeats, outcomes, releases and reaping, one named
 * statement each (the rules of ./statements.ts hold). Which moves each may
 * make, what they stamp on a member (started_at at the first move to RUNNING,
 * ended_at at the end) and the reap rule are src/core/moves.ts's, written here
 * in SQL and checked against the core by the property test; the SQLite store
 * makes the same moves in ../sqlite/moves.ts.
 *
 * - Every worker write is fenced by (id, worker_id, claims) on a leased member
 *   (RUNNING, or reserved: WAITING with a lease, see claimCtes): a worker whose
 *   lease was taken over matches no row and changes nothing.
 * - A move and its set's new counts, status and timestamps are one statement
 *   (../sql/set-rollup.ts): one round trip, and the set row is locked only while the
 *   statement runs, never across a client's round trips.
 */
import type { ClaimedRun, RunOutcome } from '../../core/types.js';
import { casesOf, skippedOf, type BatchClaimRequest, type ClaimRequest, type LeaseRef, type NextClaim } from '../claims.js';
import { toClaimed as claimedFrom } from '../rows.js';
import { caseTestNameSql, historyCases } from '../../core/result-cases.js';
import type { Queryable } from './connection.js';
import { FAILS_NOTHING, failsSetSql, setRollUpCtes } from '../sql/set-rollup.js';
import { POSTGRES } from '../sql/dialect.js';
import { queuedSetsSql } from '../queue.js';
import { msFromNow, NOW, type Names } from './statements.js';

// worker_id is set only on leased members, so this matches RUNNING and reserved ones alike.
const FENCED = "r.id = $1 AND r.worker_id = $2 AND r.claims = $3 AND r.status IN ('WAITING', 'RUNNING')";

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
      picked AS (
        SELECT id, seq, set_id FROM ${n.runs} WHERE status = 'WAITING' AND worker_id IS NULL
          AND (batch_key IS NULL OR batch_key <> ALL (${p.skip}::text[]))
          AND (${p.set}::text IS NULL OR set_id = ${p.set}::text) AND (${p.envs}::text[] IS NULL OR env = ANY (${p.envs}::text[]))
          AND set_id NOT IN (${queuedSetsSql(n.sets, 'queue_seq')})
        ORDER BY seq LIMIT ${p.limit} FOR UPDATE SKIP LOCKED
      ), ranked AS (
        SELECT p.id, row_number() OVER (ORDER BY p.seq) <= ${p.limit} - ${p.reserve} AND s.suite IS NULL AS starts
        FROM picked p JOIN ${n.sets} s ON s.id = p.set_id
      ), claimed AS (
        UPDATE ${n.runs} AS r SET status = CASE WHEN r.batch_key IS NULL AND ranked.starts THEN 'RUNNING' ELSE 'WAITING' END,
          claims = r.claims + 1, worker_id = ${p.worker},
          lease_expires_at = ${msFromNow(p.leaseMs)},
          started_at = CASE WHEN r.batch_key IS NULL AND ranked.starts THEN COALESCE(r.started_at, ${NOW}) ELSE r.started_at END,
          ran_on = CASE WHEN r.batch_key IS NULL AND ranked.starts THEN ${p.worker} ELSE r.ran_on END
        FROM ranked WHERE r.id = ranked.id
        RETURNING r.id, r.set_id, r.spec, r.claims, r.seq, r.batch_key, r.status, r.expected_ms
      )`;
}

/** Claims up to `limit` members (see claimCtes), moving their sets with them. */
export async function claimMembers(q: Queryable, n: Names, req: ClaimRequest): Promise<ClaimRow[]> {
  const { rows } = await q.query<ClaimRow>({
    name: 'runset.claimMembers',
    text: `
      WITH ${claimCtes(n, { worker: '$1', limit: '$2', reserve: '$3', leaseMs: '$4', skip: '$5', set: '$6', envs: '$7' })}, moved AS (
        SELECT set_id, 'WAITING' AS previous, status AS next, ${FAILS_NOTHING} FROM claimed
      ), ${setRollUpCtes(POSTGRES, n.sets)}
      SELECT c.id, c.set_id, c.spec, s.variables, s.env, s.suite, c.claims, c.batch_key, c.expected_ms
      FROM claimed c JOIN ${n.sets} s ON s.id = c.set_id
      ORDER BY c.seq`,
    values: [req.workerId, req.limit, req.reserve ?? 0, req.leaseMs, req.skipBatchKeys ?? [], req.setId ?? null, req.envs ?? null],
  });
  return rows;
}

/** A reserved member began: RUNNING under the same lease. False when the lease is not ours. */
export async function startMember(q: Queryable, n: Names, lease: LeaseRef, sinceMs: number): Promise<boolean> {
  // The database's clock, moved back by what the worker measured: the two clocks are never mixed.
  const began = `(${NOW} - $4::integer * interval '1 millisecond')`;
  const { rows } = await q.query({
    name: 'runset.startMember',
    text: `
      WITH started AS (
        UPDATE ${n.runs} AS r SET status = 'RUNNING', started_at = COALESCE(r.started_at, ${began}), ran_on = r.worker_id
        WHERE r.id = $1 AND r.worker_id = $2 AND r.claims = $3 AND r.status = 'WAITING'
        RETURNING r.set_id
      ), moved AS (
        SELECT set_id, 'WAITING' AS previous, 'RUNNING' AS next, ${FAILS_NOTHING} FROM started
      ), ${setRollUpCtes(POSTGRES, n.sets, began)}
      SELECT set_id FROM started`,
    values: [lease.runId, lease.workerId, lease.claim, Math.max(0, Math.round(sinceMs))],
  });
  return rows.length === 1;
}

export async function heartbeat(q: Queryable, n: Names, lease: LeaseRef, leaseMs: number, attempts: number): Promise<boolean> {
  const res = await q.query({
    name: 'runset.heartbeat',
    text: `
      UPDATE ${n.runs} AS r SET lease_expires_at = ${msFromNow('$4')}, attempts = $5
      WHERE ${FENCED}`,
    values: [lease.runId, lease.workerId, lease.claim, leaseMs, attempts],
  });
  return res.rowCount === 1;
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
        UPDATE ${n.runs} AS r SET
          status = CASE WHEN held.status = 'WAITING' AND $4 = 'SUCCESS'
            THEN ${n.refuseMove}('illegal member move WAITING → SUCCESS: a reserved member never began, so it can only FAIL')
            ELSE $4 END,
          attempts = $5, error = $6, output = $7, duration_ms = $8, skipped = $9, result_cases = $10::jsonb,
          ended_at = ${NOW}, worker_id = NULL, lease_expires_at = NULL
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

/** $11–$15: the cases history counts, a column each. */
function caseColumns(outcome: RunOutcome): unknown[] {
  const cases = historyCases(outcome.cases);
  return [cases.map((c) => c.position), cases.map((c) => c.name), cases.map((c) => c.result), cases.map((c) => c.durationMs), cases.map((c) => c.error)];
}

/** The finish's parameters; the statement (and its prepared name) differs with and without artifacts. */
function finishParams(lease: LeaseRef, outcome: RunOutcome): { values: unknown[]; withArtifacts: boolean; suffix: string } {
  const artifacts = outcome.artifacts ?? [];
  const values: unknown[] = [
    lease.runId, lease.workerId, lease.claim,
    outcome.status, outcome.attempts, outcome.error, outcome.output, Math.round(outcome.durationMs), skippedOf(outcome), casesOf(outcome),
    ...caseColumns(outcome),
  ];
  if (artifacts.length === 0) return { values, withArtifacts: false, suffix: '' };
  values.push(
    artifacts.map((a) => a.id),
    artifacts.map((a) => a.name),
    artifacts.map((a) => a.contentType),
    artifacts.map((a) => a.size),
    artifacts.map((a) => a.location),
  );
  return { values, withArtifacts: true, suffix: '+artifacts' };
}

/** Ends a member under its lease (see finishCtes). False when the lease is not ours: nothing is written. */
export async function finishMember(q: Queryable, n: Names, lease: LeaseRef, outcome: RunOutcome): Promise<boolean> {
  const finish = finishParams(lease, outcome);
  const { rows } = await q.query({
    name: `runset.finishMember${finish.suffix}`,
    text: `
      WITH ${finishCtes(n, finish.withArtifacts)}, moved AS (
        SELECT set_id, previous, next, fails FROM finished
      ), ${setRollUpCtes(POSTGRES, n.sets)}
      SELECT id FROM finished`,
    values: finish.values,
  });
  return rows.length === 1;
}

/**
 * Whether the member already holds this outcome, written under this lease: a
 * finish retried after its first try committed and the answer was lost. (A
 * member the reaper failed under the same claim holds the reaper's outcome.)
 */
export async function holdsOutcome(q: Queryable, n: Names, lease: LeaseRef, outcome: RunOutcome): Promise<boolean> {
  const { rows } = await q.query({
    name: 'runset.holdsOutcome',
    text: `
      SELECT 1 FROM ${n.runs} AS r
      WHERE r.id = $1 AND r.claims = $2 AND r.worker_id IS NULL AND r.status = $3 AND r.attempts = $4
        AND r.error IS NOT DISTINCT FROM $5 AND r.duration_ms = $6`,
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
export async function finishAndClaimMembers(
  q: Queryable,
  n: Names,
  lease: LeaseRef,
  outcome: RunOutcome,
  next: NextClaim,
): Promise<{ finished: boolean; started: boolean; claimed: ClaimRow[] }> {
  const finish = finishParams(lease, outcome);
  const [limit, reserve, leaseMs, worker, startId, startWorker, startClaim, skip, set, envs] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => `$${finish.values.length + i}`) as [
    string, string, string, string, string, string, string, string, string, string,
  ];
  const { rows } = await q.query<ClaimRow & { finished: boolean; started: boolean }>({
    name: `runset.finishAndClaimMembers${finish.suffix}`,
    text: `
      WITH ${finishCtes(n, finish.withArtifacts)}, to_start AS (
        SELECT r.id, r.status FROM ${n.runs} AS r
        WHERE r.id = ${startId} AND r.id <> $1 AND r.worker_id = ${startWorker} AND r.claims = ${startClaim}::integer AND r.status IN ('WAITING', 'RUNNING')
        FOR UPDATE
      ), begun AS (
        UPDATE ${n.runs} AS r SET status = 'RUNNING', started_at = COALESCE(r.started_at, ${NOW}), ran_on = r.worker_id,
          lease_expires_at = ${msFromNow(leaseMs)}
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
      ORDER BY c.seq`,
    values: [...finish.values, next.limit, next.reserve ?? 0, next.leaseMs, next.workerId, next.start?.runId ?? null, next.start?.workerId ?? null, next.start?.claim ?? null, next.skipBatchKeys ?? [], next.setId ?? null, next.envs ?? null],
  });
  const first = rows[0] as { finished: boolean; started: boolean } | undefined;
  return { finished: first?.finished ?? false, started: first?.started ?? false, claimed: rows.filter((r) => r.id !== null) };
}

/** Gives leased members back to WAITING (no lost lease counted); returns how many were released. */
export async function releaseMembers(q: Queryable, n: Names, leases: LeaseRef[]): Promise<number> {
  const { rows } = await q.query({
    name: 'runset.releaseMembers',
    text: `
      WITH mine AS (
        SELECT r.id, r.status FROM ${n.runs} AS r
        JOIN unnest($1::text[], $2::text[], $3::integer[]) AS l(id, worker_id, claims)
          ON r.id = l.id AND r.worker_id = l.worker_id AND r.claims = l.claims
        WHERE r.status IN ('WAITING', 'RUNNING')
        ORDER BY r.id FOR UPDATE OF r
      ), released AS (
        UPDATE ${n.runs} AS r SET status = 'WAITING', worker_id = NULL, lease_expires_at = NULL
        FROM mine WHERE r.id = mine.id
        RETURNING r.set_id, mine.status AS previous, r.status AS next
      ), moved AS (
        SELECT set_id, previous, next, ${FAILS_NOTHING} FROM released
      ), ${setRollUpCtes(POSTGRES, n.sets)}
      SELECT count(*)::integer AS released FROM released`,
    values: [leases.map((l) => l.runId), leases.map((l) => l.workerId), leases.map((l) => l.claim)],
  });
  return (rows[0] as { released: number }).released;
}

/**
 * Members whose lease expired by the database's clock: back to WAITING, or FAIL
 * with `error` once this is their `maxLostLeases`-th lost lease (reapedTo,
 * src/core/moves.ts). Rows a finisher
 * holds right now are skipped: that worker is alive.
 */
export async function reapMembers(q: Queryable, n: Names, maxLostLeases: number, error: string): Promise<{ requeued: number; failed: number }> {
  const { rows } = await q.query<{ requeued: number; failed: number }>({
    name: 'runset.reapMembers',
    text: `
      WITH expired AS (
        SELECT id, status FROM ${n.runs}
        WHERE lease_expires_at < now() AND status IN ('WAITING', 'RUNNING')
        ORDER BY id FOR UPDATE SKIP LOCKED
      ), reaped AS (
        UPDATE ${n.runs} AS r SET
          status = CASE WHEN r.lost_leases + 1 < $1 THEN 'WAITING' ELSE 'FAIL' END,
          error = CASE WHEN r.lost_leases + 1 < $1 THEN r.error ELSE $2 END,
          ended_at = CASE WHEN r.lost_leases + 1 < $1 THEN r.ended_at ELSE ${NOW} END,
          lost_leases = r.lost_leases + 1, worker_id = NULL, lease_expires_at = NULL
        FROM expired WHERE r.id = expired.id
        RETURNING r.set_id, expired.status AS previous, r.status AS next, ${failsSetSql('lost', 'r', 'r.status', 'r.attempts')} AS fails
      ), moved AS (
        SELECT set_id, previous, next, fails FROM reaped
      ), ${setRollUpCtes(POSTGRES, n.sets)}
      SELECT count(*) FILTER (WHERE next = 'WAITING')::integer AS requeued,
             count(*) FILTER (WHERE next = 'FAIL')::integer AS failed
      FROM reaped`,
    values: [maxLostLeases, error],
  });
  return rows[0] as { requeued: number; failed: number };
}

/** Reserves up to `limit` unleased waiting members of one set with one batch key: leased, still WAITING. */
export async function claimBatchMembers(
  q: Queryable,
  n: Names,
  req: BatchClaimRequest,
): Promise<ClaimRow[]> {
  const { rows } = await q.query<ClaimRow>({
    name: 'runset.claimBatchMembers',
    text: `
      WITH picked AS (
        SELECT id FROM ${n.runs}
        WHERE set_id = $2 AND batch_key = $3 AND status = 'WAITING' AND worker_id IS NULL
        ORDER BY seq LIMIT $4 FOR UPDATE SKIP LOCKED
      ), claimed AS (
        UPDATE ${n.runs} AS r SET claims = r.claims + 1, worker_id = $1,
          lease_expires_at = ${msFromNow('$5')}
        FROM picked WHERE r.id = picked.id
        RETURNING r.id, r.set_id, r.spec, r.claims, r.seq, r.batch_key, r.expected_ms
      )
      SELECT c.id, c.set_id, c.spec, s.variables, s.env, s.suite, c.claims, c.batch_key, c.expected_ms
      FROM claimed c JOIN ${n.sets} s ON s.id = c.set_id
      ORDER BY c.seq`,
    values: [req.workerId, req.setId, req.batchKey, req.limit, req.leaseMs],
  });
  return rows;
}

/** A claimed row as claims hand it out. */
export function toClaimed(r: ClaimRow, workerId: string): ClaimedRun {
  return claimedFrom(r, { spec: r.spec, variables: r.variables }, workerId);
}
