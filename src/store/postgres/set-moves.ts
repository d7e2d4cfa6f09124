/**
 * How a member move carries to its set, on PostgreSQL: the CTEs every move
 * statement (./moves.ts, ./cancel.ts) appends, which shift the set's counts,
 * stamp its timestamps and derive its status in the same statement. This is
 * the rule of moveSet (src/core/moves.ts) written in SQL, so that a move stays
 * one statement; the SQLite store calls moveSet itself (../sqlite/set-moves.ts),
 * and the property test (test/store/status-property-contract.ts) compares every
 * set both stores write with what moveSet makes of its members' moves.
 */
import type { EndCause } from '../../core/moves.js';
import { NOW, type Names } from './statements.js';

/**
 * failsSet (src/core/moves.ts) in SQL: whether member row `r`'s move to `next`
 * (its new status, with `attempts`) fails its set, for a move of `cause`.
 * `r` must expose the member's quarantined and fail_on_flaky columns.
 */
export function failsSetSql(cause: EndCause, r: string, next: string, attempts: string): string {
  if (cause === 'cancel') return `(${next} = 'FAIL')`;
  if (cause === 'lost') return `(${next} = 'FAIL' AND NOT ${r}.quarantined)`;
  return `(NOT ${r}.quarantined AND (${next} = 'FAIL' OR (${next} = 'SUCCESS' AND ${r}.fail_on_flaky AND ${attempts} > 1)))`;
}

/** The `fails` column of a `moved` row for a move that ends nothing (a claim, start or release). */
export const FAILS_NOTHING = 'false AS fails';

/**
 * The CTEs that carry member moves over to their sets, appended to a statement
 * whose earlier CTE `moved(set_id, previous, next, fails)` lists the moves it made
 * (`fails`: that end fails the set, failsSetSql). Each
 * touched set gets its counts shifted, its status derived from them and its
 * timestamps stamped — the rules of `moveSet` and `deriveSetStatus` (src/core/):
 *
 * - the set starts when its first member does (or when it fails without one
 *   having run), and never moves backwards: RUNNING once started, even if a
 *   member goes back to WAITING after a lost worker;
 * - it ends, SUCCESS or FAIL, with its last member.
 *
 * The sets are locked in id order (`locked`), after the members the statement
 * already holds. Under READ COMMITTED a row locked after a wait is read as the
 * waiter's committer left it, so counts are shifted from the latest committed
 * values, never from the statement's older snapshot. `at` is the statement's
 * now(), the same reading the member rows got.
 */
export function carryToSets(n: Names, startedAt: string = NOW): string {
  return `
      deltas AS (
        SELECT set_id,
          count(*) FILTER (WHERE next = 'WAITING') - count(*) FILTER (WHERE previous = 'WAITING') AS w,
          count(*) FILTER (WHERE next = 'RUNNING') - count(*) FILTER (WHERE previous = 'RUNNING') AS r,
          count(*) FILTER (WHERE next = 'SUCCESS') AS ok,
          count(*) FILTER (WHERE next = 'FAIL') AS ko,
          count(*) FILTER (WHERE fails) AS f,
          bool_or(next = 'RUNNING') AS starts
        FROM moved WHERE previous <> next GROUP BY set_id
      ), locked AS (
        SELECT s.id, s.started_at, s.started_at IS NOT NULL OR d.starts AS started,
          s.count_waiting + d.w AS w, s.count_running + d.r AS r, s.count_success + d.ok AS ok, s.count_fail + d.ko AS ko,
          s.count_failing + d.f AS f
        FROM ${n.sets} AS s JOIN deltas AS d ON d.set_id = s.id
        ORDER BY s.id FOR UPDATE OF s
      ), derived AS (
        SELECT locked.*, CASE
          WHEN w + r = 0 AND ok + ko > 0 THEN CASE WHEN f > 0 THEN 'FAIL' ELSE 'SUCCESS' END
          WHEN started OR r > 0 OR ok + ko > 0 THEN 'RUNNING'
          ELSE 'WAITING' END AS status
        FROM locked
      ), sets_moved AS (
        UPDATE ${n.sets} AS s SET status = x.status,
          count_waiting = x.w, count_running = x.r, count_success = x.ok, count_fail = x.ko, count_failing = x.f,
          started_at = COALESCE(x.started_at, CASE WHEN x.started OR x.status = 'FAIL' THEN ${startedAt} END),
          ended_at = CASE WHEN x.status IN ('SUCCESS', 'FAIL') THEN ${NOW} END
        FROM derived AS x WHERE s.id = x.id
        RETURNING s.id
      )`;
}
