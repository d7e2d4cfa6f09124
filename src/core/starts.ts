/**
 * How many times a member was started, and why it ran again. runset promises
 * at-least-once: a member whose start is lost (its lease expired while it ran,
 * or its worker gave it back after it had begun) is started again, so its test
 * may run twice. That is counted, never hidden:
 *
 * - a start is a move to RUNNING from WAITING (a claim that starts, or the
 *   start of a reserved member); a reserved member that never began and loses
 *   its lease or is given back was not started, and it loses no start;
 * - a lost start is recorded with its reason when it is lost (the reaper:
 *   `lease lost`; a release by its worker: `worker lost`), in order;
 * - the restarts are the starts after the first, each with the reason its
 *   previous start was lost (restartsOf);
 * - a `retry` is the test framework's own retry within one start: `attempts`
 *   counts those, not `starts`.
 *
 * A pass after a restart is not flaky (passedAfterRetry, ./states.ts: the test
 * itself failed and then passed); it passed after its run was cut short. Both
 * stores write the start and the loss in SQL (src/store/sql/member-moves.ts).
 */
import { passedAfterRetry } from './states.js';

/** Why a member's start was lost, and so why it was started again. */
export const RESTART_REASONS = Object.freeze(['lease lost', 'worker lost'] as const);
export type RestartReason = (typeof RESTART_REASONS)[number];

/**
 * The most lost starts a member records. A worker may give a started member
 * back (a drain, a shutdown) without that counting toward the lost-lease limit,
 * so a worker key on a machine runset does not own could claim, start and give
 * back one member without end: the reasons kept stop here, while `starts`
 * still counts every start. The stores cap the list in SQL
 * (src/store/sql/member-moves.ts), the property test's model in ./moves.ts.
 */
export const MAX_LOST_STARTS_KEPT = 100;

/** Why a test ran again: a restart's reason, or its framework's retry within one start. */
export type RanAgainReason = RestartReason | 'retry';

export function isRestartReason(value: unknown): value is RestartReason {
  return (RESTART_REASONS as readonly unknown[]).includes(value);
}

/**
 * The restarts of a member that was started `starts` times and lost the starts
 * `lostStarts` (in order): one per start after the first, the reason of the
 * start lost before it. A member whose last start was lost and that has not
 * started again (waiting for a worker, or failed by the reaper) has one lost
 * start more than restarts. Past MAX_LOST_STARTS_KEPT lost starts, the
 * restarts name only the first ones; `starts` keeps the true count.
 */
export function restartsOf(starts: number, lostStarts: readonly RestartReason[]): RestartReason[] {
  return lostStarts.slice(0, Math.max(0, starts - 1));
}

/** What a member says about its runs: the API member view's `status`, `attempts`, `starts` and `restarts`. */
export interface RunsOfMember {
  status: string;
  /** Executions within its last start: 1 + its framework's retries. */
  attempts: number;
  /** Its starts; absent from a server older than the field: read as one start when it ran. */
  starts?: number | undefined;
  /** One reason per start after the first; absent from an older server: none. */
  restarts?: readonly RestartReason[] | undefined;
}

/** Why the test ran more than once, in order: each restart's reason, then a `retry` for each retry of its last start. */
export function ranAgainReasons(member: RunsOfMember): RanAgainReason[] {
  const retries = Math.max(0, member.attempts - 1);
  return [...(member.restarts ?? []), ...Array.from({ length: retries }, () => 'retry' as const)];
}

/**
 * How a member that passed got there: `first run`; `on retry` (its framework
 * retried it within its last start: flaky, passedAfterRetry); `after a lost
 * lease` or `after a lost worker` (started again after its start was lost, and
 * passed at once: not flaky). Null when it did not pass.
 */
export type PassedHow = 'first run' | 'on retry' | 'after a lost lease' | 'after a lost worker';

export function passedHow(member: RunsOfMember): PassedHow | null {
  if (member.status !== 'SUCCESS') return null;
  if (passedAfterRetry(member.status, member.attempts)) return 'on retry';
  const last = member.restarts?.at(-1);
  if (last === 'lease lost') return 'after a lost lease';
  if (last === 'worker lost') return 'after a lost worker';
  return 'first run';
}

/**
 * Whether a member was started again because a start of it was lost (as
 * against a retry): started twice or more. A member from a server older than
 * `starts` reads as not restarted. History, the client's reports and the
 * dashboard all ask this one function.
 */
export function wasRestarted(member: { starts?: number | undefined }): boolean {
  return (member.starts ?? 0) > 1;
}

/**
 * One line for people on why a member ran more than once, or null when it ran
 * once: the client's summary, its JUnit report and the dashboard say the same.
 * A pass after a lost start says it is not flaky.
 */
export function ranAgainText(member: RunsOfMember): string | null {
  const reasons = ranAgainReasons(member);
  if (reasons.length === 0) return null;
  const how = passedHow(member);
  // Past MAX_LOST_STARTS_KEPT the reasons are not all kept: the starts still count every run.
  const unnamed = Math.max(0, (member.starts ?? 0) - 1 - (member.restarts?.length ?? 0));
  const named = unnamed > 0 ? [...reasons, `${unnamed} more`] : reasons;
  const runs = `ran ${reasons.length + unnamed + 1} times (${named.join(', ')})`;
  if (how === 'on retry') return `passed on retry (flaky): ${runs}`;
  if (how === 'after a lost lease' || how === 'after a lost worker') return `passed ${how}, not flaky: ${runs}`;
  return runs;
}
