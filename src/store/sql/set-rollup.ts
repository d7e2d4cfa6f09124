/**
 * How member moves carry to their sets, written once for both stores: the
 * status rule (whether a member's end fails its set) and the roll-up that
 * shifts each touched set's counts, derives its status and stamps its
 * timestamps from the members a statement moved. src/core/moves.ts (failsSet,
 * moveSet, deriveSetStatus) is the model these are held to by the property
 * test (test/store/status-property-contract.ts), on both stores.
 */
import type { EndCause } from '../../core/moves.js';
import type { Dialect } from './dialect.js';

/**
 * The status rule (failsSet): whether member row `r`'s move to `next` (its new
 * status, with `attempts`) fails its set, for a move of `cause`. `r` must expose
 * the member's quarantined and fail_on_flaky columns.
 */
export function failsSetSql(cause: EndCause, r: string, next: string, attempts: string): string {
  if (cause === 'cancel') return `(${next} = 'FAIL')`;
  if (cause === 'lost') return `(${next} = 'FAIL' AND NOT ${r}.quarantined)`;
  return `(NOT ${r}.quarantined AND (${next} = 'FAIL' OR (${next} = 'SUCCESS' AND ${r}.fail_on_flaky AND ${attempts} > 1)))`;
}

/** The `fails` column of a `moved` row for a move that ends nothing (a claim, start or release). */
export const FAILS_NOTHING = 'false AS fails';

/**
 * The roll-up, for a statement whose earlier CTE `moved(set_id, previous, next,
 * fails)` lists the member moves it made (`fails`: that end fails the set,
 * failsSetSql): `ctes` (deltas, locked, derived) to append after `moved`, and
 * `update`, the UPDATE of the sets that reads them — a CTE of its own on
 * PostgreSQL, where the move is one statement, the statement itself on SQLite,
 * which allows no UPDATE inside a WITH. Each touched set gets:
 *
 * - its counts shifted by its members' moves (only those that changed state);
 * - its status derived from them (deriveSetStatus): it starts when its first
 *   member does (or fails without one having run) and never moves backwards,
 *   RUNNING once started even if a member goes back to WAITING after a lost
 *   worker; it ends, SUCCESS or FAIL, with its last member;
 * - started_at at `startedAt` (the move's clock unless told), ended_at at its end.
 *
 * On PostgreSQL the sets are locked in id order (`locked`), after the members
 * the statement already holds. Under READ COMMITTED a row locked after a wait is
 * read as its committer left it, so counts are shifted from the latest committed
 * values, never from the statement's older snapshot.
 */
export function setRollUp(d: Dialect, sets: string, startedAt: string = d.now): { ctes: string; update: string } {
  const ctes = `
      deltas AS (
        SELECT set_id,
          count(*) FILTER (WHERE next = 'WAITING') - count(*) FILTER (WHERE previous = 'WAITING') AS w,
          count(*) FILTER (WHERE next = 'RUNNING') - count(*) FILTER (WHERE previous = 'RUNNING') AS r,
          count(*) FILTER (WHERE next = 'SUCCESS') AS ok,
          count(*) FILTER (WHERE next = 'FAIL') AS ko,
          count(*) FILTER (WHERE fails) AS f,
          count(*) FILTER (WHERE next = 'RUNNING') > 0 AS starts
        FROM moved WHERE previous <> next GROUP BY set_id
      ), locked AS (
        SELECT s.id, s.started_at, s.started_at IS NOT NULL OR d.starts AS started,
          s.count_waiting + d.w AS w, s.count_running + d.r AS r, s.count_success + d.ok AS ok, s.count_fail + d.ko AS ko,
          s.count_failing + d.f AS f
        FROM ${sets} AS s JOIN deltas AS d ON d.set_id = s.id
        ORDER BY s.id${d.lockRowsOf('s')}
      ), derived AS (
        SELECT locked.*, CASE
          WHEN w + r = 0 AND ok + ko > 0 THEN CASE WHEN f > 0 THEN 'FAIL' ELSE 'SUCCESS' END
          WHEN started OR r > 0 OR ok + ko > 0 THEN 'RUNNING'
          ELSE 'WAITING' END AS status
        FROM locked
      )`;
  const update = `
        UPDATE ${sets} AS s SET status = x.status,
          count_waiting = x.w, count_running = x.r, count_success = x.ok, count_fail = x.ko, count_failing = x.f,
          started_at = COALESCE(x.started_at, CASE WHEN x.started OR x.status = 'FAIL' THEN ${startedAt} END),
          ended_at = CASE WHEN x.status IN ('SUCCESS', 'FAIL') THEN ${d.now} END
        FROM derived AS x WHERE s.id = x.id`;
  return { ctes, update };
}

/** The roll-up as CTEs only, `sets_moved` its UPDATE: for an engine that allows an UPDATE inside a WITH (PostgreSQL). */
export function setRollUpCtes(d: Dialect, sets: string, startedAt: string = d.now): string {
  const { ctes, update } = setRollUp(d, sets, startedAt);
  return `${ctes}, sets_moved AS (${update}
      )`;
}
