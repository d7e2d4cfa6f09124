/**
 * What each member move writes on its member, written once for both stores:
 * the SET list of every UPDATE of test_runs a move makes, over the member row
 * aliased `r` (`UPDATE … AS r`), with the move's values as placeholders its
 * store passes in (PostgreSQL's `$n`, SQLite's `@name`). Every one takes the
 * dialect, and the SQLite store binds its clock (`@at`) to every move, so that
 * a column every move writes is added here (and in a migration per store) and
 * nowhere else. The stores differ only
 * in how they find the rows and run the statements (../sqlite/moves.ts, a few
 * prepared statements in one transaction; ../postgres/moves.ts, one statement
 * per move). The rules written here are src/core/moves.ts's (MEMBER_MOVES,
 * stampMember, reapedTo), checked by the property test on both stores:
 *
 * - a member starts (started_at) at its first move to RUNNING and keeps that
 *   start when claimed again; it ends (ended_at) at SUCCESS or FAIL;
 * - every move that ends or gives back a member drops its lease;
 * - every move from WAITING to RUNNING counts a start (`starts`), and a RUNNING
 *   member given back or reaped records why its start was lost (`lost_starts`,
 *   src/core/starts.ts, the first MAX_LOST_STARTS_KEPT of them); a reserved
 *   member that never began loses no start.
 */
import { MAX_LOST_STARTS_KEPT, type RestartReason } from '../../core/starts.js';
import type { Dialect } from './dialect.js';

/** A start of the member counted when `starting` (an SQL condition over the old row) holds. */
function countStart(starting: string): string {
  return `starts = r.starts + CASE WHEN ${starting} THEN 1 ELSE 0 END`;
}

/** A RUNNING member's start lost for `reason`, recorded in order up to MAX_LOST_STARTS_KEPT; a reserved member's lease was no start. */
function loseStart(d: Dialect, reason: RestartReason): string {
  const kept = `r.status = 'RUNNING' AND ${d.jsonLength('r.lost_starts')} < ${MAX_LOST_STARTS_KEPT}`;
  return `lost_starts = CASE WHEN ${kept} THEN ${d.jsonAppended('r.lost_starts', `'${reason}'`)} ELSE r.lost_starts END`;
}

/** Every worker write is fenced by (id, worker_id, claims) on a leased member: RUNNING, or reserved (WAITING with a lease). */
export function fenced(p: { id: string; worker: string; claims: string }): string {
  return `r.id = ${p.id} AND r.worker_id = ${p.worker} AND r.claims = ${p.claims} AND r.status IN ('WAITING', 'RUNNING')`;
}

/** A lease taken on an unleased WAITING member: the claim counted, the worker and the expiry set. */
export function reserveMember(d: Dialect, p: { worker: string; leaseMs: string }): string {
  return `claims = r.claims + 1, worker_id = ${p.worker}, lease_expires_at = ${d.msFromNow(p.leaseMs)}`;
}

/** A claim: reserved, and where `starts` holds, started at once (RUNNING, stamped, ran on the claimer). */
export function claimMember(d: Dialect, p: { starts: string; worker: string; leaseMs: string }): string {
  return `status = CASE WHEN ${p.starts} THEN 'RUNNING' ELSE 'WAITING' END, ${reserveMember(d, p)},
          started_at = CASE WHEN ${p.starts} THEN COALESCE(r.started_at, ${d.now}) ELSE r.started_at END,
          ran_on = CASE WHEN ${p.starts} THEN ${p.worker} ELSE r.ran_on END, ${countStart(p.starts)}`;
}

/** A reserved member begins at `at` (the move's clock unless told) under its lease; one already RUNNING under it starts no more. */
export function startMember(d: Dialect, at: string = d.now): string {
  return `status = 'RUNNING', started_at = COALESCE(r.started_at, ${at}), ran_on = r.worker_id, ${countStart("r.status = 'WAITING'")}`;
}

/** A heartbeat: the lease renewed, and the attempts so far recorded. */
export function heartbeatMember(d: Dialect, p: { leaseMs: string; attempts: string }): string {
  return `${renewLease(d, p.leaseMs)}, attempts = ${p.attempts}`;
}

/** The lease renewed for `leaseMs` more. */
export function renewLease(d: Dialect, leaseMs: string): string {
  return `lease_expires_at = ${d.msFromNow(leaseMs)}`;
}

/**
 * An outcome under the lease. A reserved member (still WAITING) never began,
 * so it may only end FAIL: a SUCCESS for it calls `refuse`, a function that
 * raises, and the move rolls back.
 */
export function finishMember(
  d: Dialect,
  p: { refuse: string; status: string; attempts: string; error: string; output: string; durationMs: string; skipped: string; resultCases: string },
): string {
  return `status = CASE WHEN r.status = 'WAITING' AND ${p.status} = 'SUCCESS'
            THEN ${p.refuse}('illegal member move WAITING → SUCCESS: a reserved member never began, so it can only FAIL')
            ELSE ${p.status} END,
          attempts = ${p.attempts}, error = ${p.error}, output = ${p.output}, duration_ms = ${p.durationMs}, skipped = ${p.skipped},
          result_cases = ${d.json(p.resultCases)}, ended_at = ${d.now}, worker_id = NULL, lease_expires_at = NULL`;
}

/** The lease given back: WAITING again, no lost lease counted; a member that had begun lost its start to its worker. */
export function releaseMember(d: Dialect): string {
  return `status = 'WAITING', worker_id = NULL, lease_expires_at = NULL, ${loseStart(d, 'worker lost')}`;
}

/**
 * An expired lease (reapedTo): back to WAITING until this is the member's
 * `maxLostLeases`-th lost lease, then FAIL with `error`. A member that had
 * begun lost its start to the lease.
 */
export function reapMember(d: Dialect, p: { maxLostLeases: string; error: string }): string {
  const requeued = `r.lost_leases + 1 < ${p.maxLostLeases}`;
  return `status = CASE WHEN ${requeued} THEN 'WAITING' ELSE 'FAIL' END,
          error = CASE WHEN ${requeued} THEN r.error ELSE ${p.error} END,
          ended_at = CASE WHEN ${requeued} THEN r.ended_at ELSE ${d.now} END,
          lost_leases = r.lost_leases + 1, worker_id = NULL, lease_expires_at = NULL, ${loseStart(d, 'lease lost')}`;
}

/**
 * Its set cancelled: FAIL with `error`, leased or not (the lease goes, so its
 * holder's later writes match nothing); a member that was RUNNING keeps how
 * long it ran.
 */
export function cancelMember(d: Dialect, p: { error: string }): string {
  return `status = 'FAIL', error = ${p.error}, ended_at = ${d.now},
          duration_ms = CASE WHEN r.status = 'RUNNING' AND r.started_at IS NOT NULL THEN ${d.msBetween('r.started_at', d.now)} END,
          worker_id = NULL, lease_expires_at = NULL`;
}
