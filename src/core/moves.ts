/**
 * How members move, and what each move does to a member's and its set's
 * timestamps and status: the model of the rules both stores keep. The stores
 * write them once in SQL (src/store/sql/); the property test
 * (test/store/status-property-contract.ts) drives both stores through random
 * moves and compares every member and set with these functions. failsSet,
 * reapedTo, stampMember, startsAfter and moveSet are that model only: no store
 * calls them.
 */
import { deriveSetStatus, isFinal, passedAfterRetry, type Counts, type RunState } from './states.js';
import { MAX_LOST_STARTS_KEPT, type RestartReason } from './starts.js';

/**
 * The moves a store makes on a member, each with the state changes it may make
 * (from → to, as the set's counts see them). A reserved member is leased but
 * WAITING: a claim that reserves, a release or a reap of it, changes no state.
 * Nothing leaves SUCCESS or FAIL.
 */
export const MEMBER_MOVES = Object.freeze({
  /** A claim leases a WAITING member: it starts (RUNNING) or is reserved (still WAITING). */
  claim: [['WAITING', 'RUNNING'], ['WAITING', 'WAITING']],
  /** A reserved member begins. */
  start: [['WAITING', 'RUNNING']],
  /** A heartbeat renews the lease and moves nothing. */
  heartbeat: [['RUNNING', 'RUNNING'], ['WAITING', 'WAITING']],
  /** An outcome under the lease; a reserved member never began, so it may only FAIL. */
  finish: [['RUNNING', 'SUCCESS'], ['RUNNING', 'FAIL'], ['WAITING', 'FAIL']],
  /** The lease given back (shutdown, a reservation not needed). */
  release: [['RUNNING', 'WAITING'], ['WAITING', 'WAITING']],
  /** An expired lease: back to WAITING, or FAIL once the member has lost too many (reapedTo). */
  reap: [['RUNNING', 'WAITING'], ['WAITING', 'WAITING'], ['RUNNING', 'FAIL'], ['WAITING', 'FAIL']],
  /** The set is cancelled (or fails fast): every unfinished member ends FAIL, leased or not. */
  cancel: [['WAITING', 'FAIL'], ['RUNNING', 'FAIL']],
} as const satisfies Record<string, ReadonlyArray<readonly [RunState, RunState]>>);

export type MemberMove = keyof typeof MEMBER_MOVES;

/**
 * Whether a claim starts a member (RUNNING at once) rather than reserving it:
 * only when nothing stands between its claim and its test. A batched member
 * begins when its executor says so; a member of a set that runs an uploaded
 * suite version waits while its worker fetches the version and installs its
 * dependencies (seconds to minutes), and starts when its test does. (A slot's
 * members claimed ahead, ClaimRequest.reserve, are reserved as well.) The SQL
 * of both stores writes the same rule: `batch_key IS NULL AND suite IS NULL`.
 */
export function startsAtClaim(member: { batchKey: string | null; suiteVersion?: string | null | undefined }): boolean {
  return member.batchKey === null && (member.suiteVersion ?? null) === null;
}

/** Whether `move` may take a member from `from` to `to`. */
export function canMakeMove(move: MemberMove, from: RunState, to: RunState): boolean {
  return (MEMBER_MOVES[move] as ReadonlyArray<readonly [RunState, RunState]>).some(([f, t]) => f === from && t === to);
}

/** Whether some move changes a member's state from `from` to `to`: what a set's counts may see. */
export function canMoveMember(from: RunState, to: RunState): boolean {
  return from !== to && (Object.keys(MEMBER_MOVES) as MemberMove[]).some((move) => canMakeMove(move, from, to));
}

/**
 * Where the reaper sends a member whose lease expired, given the leases it had
 * lost before this one: back to WAITING for another claim until this is its
 * `maxLostLeases`-th lost lease, then FAIL (with WORKER_LOST, src/store/claims.ts).
 */
export function reapedTo(lostLeasesBefore: number, maxLostLeases: number): 'WAITING' | 'FAIL' {
  return lostLeasesBefore + 1 < maxLostLeases ? 'WAITING' : 'FAIL';
}

/** The rules a member was planned with that decide whether its end fails its set (src/sets/plan.ts). */
export interface MemberRules {
  /** Its test was quarantined in its environment when the set was planned. */
  quarantined: boolean;
  /** Its environment's failOnFlaky when the set was planned. */
  failOnFlaky: boolean;
}

/** Why a member ended: its own outcome (a finish), too many lost leases (the reaper), or its set's cancel. */
export type EndCause = 'outcome' | 'lost' | 'cancel';

/**
 * Whether a member's move to `to` fails its set — the status rule beside the
 * seed's: a set passes when every member that is not quarantined passed.
 * - a cancel always does: a cancelled set never passes, quarantined or not;
 * - a FAIL does unless the member is quarantined;
 * - a SUCCESS after a retry does under failOnFlaky, unless quarantined;
 * - nothing else does (a member that has not ended fails nothing yet).
 * Both stores write this rule in SQL (failsSetSql, src/store/sql/set-rollup.ts),
 * tied to this one by the property test.
 */
export function failsSet(member: MemberRules, to: RunState, attempts: number, cause: EndCause): boolean {
  if (cause === 'cancel') return to === 'FAIL';
  if (member.quarantined) return false;
  if (to === 'FAIL') return true;
  return to === 'SUCCESS' && member.failOnFlaky && passedAfterRetry(to, attempts);
}

export interface Stamps {
  startedAt: string | null;
  endedAt: string | null;
}

/**
 * A member's timestamps after it moved to `to` at `at`: it starts at its
 * first move to RUNNING (a member given back and claimed again keeps its first
 * start) and ends when it reaches SUCCESS or FAIL. A member that ends without
 * having started keeps no start: it never ran.
 */
export function stampMember(member: Stamps, to: RunState, at: string): Stamps {
  return {
    startedAt: member.startedAt ?? (to === 'RUNNING' ? at : null),
    endedAt: isFinal(to) ? at : member.endedAt,
  };
}

/** A member's starts, and why each start it lost was lost, in order (./starts.ts). */
export interface StartCount {
  starts: number;
  lostStarts: readonly RestartReason[];
}

/**
 * A member's starts after `move` took it from `from` to `to`: a move from
 * WAITING to RUNNING is a start; a RUNNING member reaped lost its start to its
 * lease (`lease lost`, whether it goes back to WAITING or ends FAIL), one
 * released lost it to its worker (`worker lost`). A reserved member (WAITING
 * under a lease) never began: reaping or releasing it loses no start. The
 * reasons stop at MAX_LOST_STARTS_KEPT.
 */
export function startsAfter(member: StartCount, move: MemberMove, from: RunState, to: RunState): StartCount {
  if (from === 'WAITING' && to === 'RUNNING') return { starts: member.starts + 1, lostStarts: member.lostStarts };
  if (from === 'RUNNING' && (move === 'reap' || move === 'release')) {
    if (member.lostStarts.length >= MAX_LOST_STARTS_KEPT) return member;
    return { starts: member.starts, lostStarts: [...member.lostStarts, move === 'reap' ? 'lease lost' : 'worker lost'] };
  }
  return member;
}

export interface SetProgress extends Stamps {
  counts: Counts;
  /** How many of its members' ends fail it (failsSet). */
  failing: number;
  status: RunState;
}

/**
 * A set after one of its members moved `from` → `to` at `at` (`fails`: that
 * end fails the set, failsSet): counts shifted, status derived
 * (deriveSetStatus), and its timestamps:
 * - it starts when its first member does, and a set that ends without any
 *   member having started (cancelled, or lost to the reaper, before one ran)
 *   started when it ended;
 * - it ends with its last member, at that member's end.
 * Throws on a move no member may make (canMoveMember).
 */
export function moveSet(set: Pick<SetProgress, 'counts' | 'failing' | 'startedAt'>, from: RunState, to: RunState, at: string, fails: boolean): SetProgress {
  if (!canMoveMember(from, to)) throw new Error(`illegal member move ${from} → ${to}`);
  if (fails && !isFinal(to)) throw new Error(`a move to ${to} cannot fail a set`);
  const counts = { ...set.counts };
  counts[from]--;
  counts[to]++;
  const failing = set.failing + (fails ? 1 : 0);
  const started = set.startedAt ?? (to === 'RUNNING' ? at : null);
  const status = deriveSetStatus(counts, started !== null, failing);
  const ended = isFinal(status);
  return { counts, failing, status, startedAt: started ?? (ended ? at : null), endedAt: ended ? at : null };
}
