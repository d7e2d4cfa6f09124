/**
 * States of Test Run Sets and Test Runs, and a set's status. How members move
 * between them, and what each move stamps, is ./moves.ts.
 *
 * The seed contract names four states; the same four key `progress.counts`.
 * A set's status is never written by hand: it is derived from its members'
 * counts (see `deriveSetStatus`) in the same transaction as each member move.
 */

export const RUN_STATES = Object.freeze(['WAITING', 'RUNNING', 'SUCCESS', 'FAIL'] as const);
export type RunState = (typeof RUN_STATES)[number];

export const FINAL_STATES: ReadonlySet<RunState> = new Set(['SUCCESS', 'FAIL']);

export function isFinal(state: RunState): boolean {
  return FINAL_STATES.has(state);
}

export type Counts = Record<RunState, number>;

export function emptyCounts(): Counts {
  return { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 0 };
}

/**
 * The set's status from its member counts.
 *
 * - WAITING while no member has ever started (`everStarted` false);
 * - RUNNING once one has, until all have ended — also when a member went back to
 *   WAITING after a lost worker: a set never moves backwards;
 * - once all have ended, FAIL when one of their ends fails the set (`failing`,
 *   counted by failsSet in ./moves.ts: a FAIL that is not quarantined, a cancel,
 *   a pass after a retry under failOnFlaky), SUCCESS otherwise. `counts` stay the
 *   members' real states: a set may pass with a quarantined member in FAIL.
 */
export function deriveSetStatus(counts: Counts, everStarted: boolean, failing: number): RunState {
  const total = counts.WAITING + counts.RUNNING + counts.SUCCESS + counts.FAIL;
  const ended = counts.SUCCESS + counts.FAIL;
  if (total > 0 && ended === total) return failing > 0 ? 'FAIL' : 'SUCCESS';
  if (everStarted || counts.RUNNING > 0 || ended > 0) return 'RUNNING';
  return 'WAITING';
}

/**
 * "Flaky", judged on one run: it passed, but only after a retry. The members
 * list, test history, the client's reports and the dashboard all ask this one
 * function (history adds its own second rule, on pairs of runs of one commit).
 */
export function passedAfterRetry(status: string, attempts: number): boolean {
  return status === 'SUCCESS' && attempts > 1;
}

/**
 * Where an unfinished set stands, for people (its status stays the seed's
 * WAITING or RUNNING): `queued` behind its environment's limit; `preparing`
 * while a worker holds members none of which has begun (it fetches the suite
 * version and installs its dependencies, starts the test process and its
 * webServer: its members stay WAITING meanwhile); `waiting` for a worker;
 * `running` once a member began; `ended`.
 */
export type SetPhase = 'queued' | 'waiting' | 'preparing' | 'running' | 'ended';

export function setPhase(status: RunState, queued: boolean, heldMembers: number): SetPhase {
  if (isFinal(status)) return 'ended';
  if (status === 'RUNNING') return 'running';
  if (queued) return 'queued';
  return heldMembers > 0 ? 'preparing' : 'waiting';
}
