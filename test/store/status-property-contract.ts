/**
 * The rules of src/core/moves.ts, checked on every backend by random sequences
 * of member moves (fast-check): claims, reserved claims and their starts,
 * heartbeats, finishes that pass (at once or after a retry) or fail (a reserved
 * member's that fails), on members quarantined or not and under failOnFlaky or not,
 * releases, leases that expire and are reaped, and cancels. The SQLite store
 * calls the core functions; the PostgreSQL store writes them in SQL: this is
 * what ties the two.
 *
 * After every call the test reads the set and its members back and checks that
 * every member's starts and restarts are what startsAfter counts of its move
 * (a start from WAITING to RUNNING; a start lost when a RUNNING member is reaped
 * or released); and for each member whose state or timestamps changed:
 * - the call may make that move (canMakeMove, the core table of moves);
 * - a reaped member went where the reap rule sends it (reapedTo), FAIL with WORKER_LOST;
 * - its timestamps are what stampMember makes of the move, at a time within the call;
 * and then that the stored set is exactly what moveSet makes of those moves,
 * from the set as it was: counts, failing (failsSet), status (deriveSetStatus),
 * startedAt, endedAt.
 * A call under a lease that is no longer ours (its member ended) must say so.
 *
 * Seeded: PROPERTY_SEED (default fixed) gives the same sequences every run.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import type { Store } from '../../src/store/store.js';
import { leaseOf, WORKER_LOST } from '../../src/store/store.js';
import type { ClaimedRun, TestRunRecord } from '../../src/core/types.js';
import { emptyCounts, isFinal, type RunState } from '../../src/core/states.js';
import { canMakeMove, failsSet, moveSet, reapedTo, stampMember, startsAfter, type EndCause, type MemberMove, type MemberRules, type SetProgress, type StartCount } from '../../src/core/moves.js';
import { restartsOf } from '../../src/core/starts.js';
import { newSet } from './fixtures.js';

type Move =
  | { kind: 'claim'; limit: number; reserve: number }
  | { kind: 'start'; pick: number }
  | { kind: 'heartbeat'; pick: number }
  | { kind: 'finish'; pick: number; pass: boolean; attempts: number }
  | { kind: 'failReserved'; pick: number }
  | { kind: 'release'; pick: number }
  | { kind: 'expire'; limit: number }
  | { kind: 'cancel' };

const moveArb: fc.Arbitrary<Move> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('claim' as const), limit: fc.integer({ min: 1, max: 3 }), reserve: fc.integer({ min: 0, max: 1 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('start' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('heartbeat' as const), pick: fc.nat() }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('finish' as const), pick: fc.nat(), pass: fc.boolean(), attempts: fc.integer({ min: 1, max: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('failReserved' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire' as const), limit: fc.integer({ min: 1, max: 2 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'cancel' as const }) },
);

/** Members quarantined or not, under failOnFlaky or not: the status rule's inputs (failsSet). */
const rulesArb: fc.Arbitrary<MemberRules> = fc.record({ quarantined: fc.boolean(), failOnFlaky: fc.boolean() });

/** Why a member ended, by the kind of call that ended it. */
const CAUSES: Record<MemberMove, EndCause> = { claim: 'outcome', start: 'outcome', heartbeat: 'outcome', finish: 'outcome', release: 'outcome', reap: 'lost', cancel: 'cancel' };

const LONG_LEASE_MS = 60_000;
/** Short enough to expire within a move, long enough for the claim's own statement to finish under it. */
const SHORT_LEASE_MS = 30;
const MAX_LOST_LEASES = 2;
/** How far a stored time may sit outside the call that wrote it: both clocks are this machine's, stored to the millisecond. */
const CLOCK_SLACK_MS = 5;

type Member = Pick<TestRunRecord, 'status' | 'startedAt' | 'endedAt' | 'error'>;

/** What the test knows of one set: the set as the rules make it, and its members as last read. */
interface Model {
  setId: string;
  set: SetProgress;
  members: Map<string, Member>;
  /** Each member's rules, as it was created with them. */
  rules: Map<string, MemberRules>;
  /** Leases each member has lost to the reaper so far. */
  lost: Map<string, number>;
  /** Each member's starts and lost starts as the rules count them (startsAfter). */
  starts: Map<string, StartCount>;
}

/** One run of a sequence: a set of one member per `rules` entry on a fresh worker id, moved by `moves`. */
async function play(store: Store, rules: readonly MemberRules[], moves: readonly Move[]): Promise<void> {
  const created = newSet(rules.length);
  created.runs = created.runs.map((run, i) => ({ ...run, ...rules[i]! }));
  await store.sets.create(created);
  const model: Model = {
    setId: created.id,
    set: { counts: { ...emptyCounts(), WAITING: rules.length }, failing: 0, status: 'WAITING', startedAt: null, endedAt: null },
    members: new Map(created.runs.map((r) => [r.id, { status: 'WAITING', startedAt: null, endedAt: null, error: null }])),
    rules: new Map(created.runs.map((r) => [r.id, { quarantined: r.quarantined, failOnFlaky: r.failOnFlaky }])),
    lost: new Map(),
    starts: new Map(created.runs.map((r) => [r.id, { starts: 0, lostStarts: [] }])),
  };
  await check(store, model, 'claim', Date.now(), Date.now()); // as created: nothing moved
  const workerId = `property-${created.id.slice(-8)}`;
  let held: ClaimedRun[] = [];
  let reserved: ClaimedRun[] = [];
  const pickFrom = <T>(list: T[], pick: number): T | undefined => (list.length === 0 ? undefined : list[pick % list.length]);
  /** Whether a lease on this member is still ours: only a cancel ends a member under this worker's long leases. */
  const ours = (run: ClaimedRun) => !isFinal(model.members.get(run.id)!.status);

  let cancelledFrom = 0;
  try {
    for (const move of moves) await playMove(move);
  } finally {
    cancelledFrom = Date.now();
    // Claims take the oldest set's members first, from any set: end this one (a
    // failed sequence too, while fast-check shrinks it), so that the next
    // sequence on the same store claims only its own.
    await store.sets.cancel(model.setId, { byKeyId: null, byKeyName: null, error: 'cancelled' });
  }
  await check(store, model, 'cancel', cancelledFrom, Date.now());

  async function playMove(move: Move): Promise<void> {
    switch (move.kind) {
      case 'claim': {
        const claimed = await step(store, model, 'claim', () =>
          store.claims.claimRuns({ workerId, limit: move.limit, leaseMs: LONG_LEASE_MS, reserve: Math.min(move.reserve, move.limit) }),
        );
        // The last `reserve` of the `limit` are reserved: a short claim starts them all.
        const cut = move.limit - Math.min(move.reserve, move.limit);
        held.push(...claimed.slice(0, cut));
        reserved.push(...claimed.slice(cut));
        break;
      }
      case 'start': {
        const run = pickFrom(reserved, move.pick);
        if (!run) break;
        reserved = reserved.filter((r) => r !== run);
        const expected = ours(run);
        assert.equal(await step(store, model, 'start', () => store.claims.startRun(leaseOf(run))), expected, 'a start says whether the lease was ours');
        if (expected) held.push(run);
        break;
      }
      case 'heartbeat': {
        const run = pickFrom([...held, ...reserved], move.pick);
        if (!run) break;
        const expected = ours(run);
        assert.equal(await step(store, model, 'heartbeat', () => store.claims.heartbeat(leaseOf(run), LONG_LEASE_MS, 1)), expected, 'a heartbeat says whether the lease is ours');
        break;
      }
      case 'finish':
      case 'failReserved': {
        const from = move.kind === 'finish' ? held : reserved;
        const run = pickFrom(from, move.pick);
        if (!run) break;
        held = held.filter((r) => r !== run);
        reserved = reserved.filter((r) => r !== run);
        const pass = move.kind === 'finish' && move.pass;
        const expected = ours(run);
        const outcome = { status: pass ? 'SUCCESS' : 'FAIL', attempts: move.kind === 'finish' ? move.attempts : 1, error: pass ? null : 'failed', output: '', durationMs: 1 } as const;
        assert.equal(await step(store, model, 'finish', () => store.claims.finishRun(leaseOf(run), outcome)), expected, 'a finish says whether the lease was ours');
        break;
      }
      case 'release': {
        const run = pickFrom(held, move.pick) ?? pickFrom(reserved, move.pick);
        if (!run) break;
        held = held.filter((r) => r !== run);
        reserved = reserved.filter((r) => r !== run);
        const expected = ours(run) ? 1 : 0;
        assert.equal(await step(store, model, 'release', () => store.claims.releaseRuns([leaseOf(run)])), expected, 'a release counts the leases that were ours');
        break;
      }
      case 'expire': {
        // A worker that claims and vanishes: its leases run out and the reaper acts.
        const lostRuns = await step(store, model, 'claim', () => store.claims.claimRuns({ workerId: `${workerId}-lost`, limit: move.limit, leaseMs: SHORT_LEASE_MS }));
        await sleep(SHORT_LEASE_MS + 20);
        const expected = new Map(lostRuns.map((r) => [r.id, reapedTo(model.lost.get(r.id) ?? 0, MAX_LOST_LEASES)]));
        const reaped = await step(store, model, 'reap', () => store.claims.reapExpired(MAX_LOST_LEASES), expected);
        assert.deepEqual(reaped, {
          requeued: [...expected.values()].filter((to) => to === 'WAITING').length,
          failed: [...expected.values()].filter((to) => to === 'FAIL').length,
        });
        for (const id of expected.keys()) model.lost.set(id, (model.lost.get(id) ?? 0) + 1);
        break;
      }
      case 'cancel':
        await step(store, model, 'cancel', () => store.sets.cancel(model.setId, { byKeyId: null, byKeyName: null, error: 'cancelled' }));
        break;
    }
  }
}

/** Makes one call, then checks what it did against the rules (see check). */
async function step<T>(store: Store, model: Model, move: MemberMove, call: () => Promise<T>, reaped?: ReadonlyMap<string, RunState>): Promise<T> {
  const before = Date.now();
  const result = await call();
  await check(store, model, move, before, Date.now(), reaped);
  return result;
}

/**
 * Reads the set and its members back and compares them with the rules applied
 * to what moved since the last check (all by one call of kind `move`, made
 * between `from` and `to`, ms); updates the model.
 */
async function check(store: Store, model: Model, move: MemberMove, from: number, to: number, reaped?: ReadonlyMap<string, RunState>): Promise<void> {
  const [got, runs] = await Promise.all([store.sets.get(model.setId), store.sets.listRuns(model.setId)]);
  assert.ok(got, 'the set is there');
  assert.equal(runs.length, model.members.size, 'every member is listed');
  let set = model.set;
  for (const run of runs) {
    const was = model.members.get(run.id);
    assert.ok(was, 'a member of the set');
    const where = `${move} ${was.status} → ${run.status} (member ${run.id})`;
    if (reaped?.has(run.id)) {
      assert.equal(run.status, reaped.get(run.id), `the reap rule: ${where}`);
      if (run.status === 'FAIL') assert.equal(run.error, WORKER_LOST, `a member lost too often fails as such: ${where}`);
    }
    const counted = startsAfter(model.starts.get(run.id)!, move, was.status, run.status);
    assert.deepEqual({ starts: run.starts, restarts: run.restarts }, { starts: counted.starts, restarts: restartsOf(counted.starts, counted.lostStarts) }, `the member's starts follow startsAfter: ${where}`);
    model.starts.set(run.id, counted);
    if (was.status === run.status && was.startedAt === run.startedAt && was.endedAt === run.endedAt) continue;
    assert.ok(canMakeMove(move, was.status, run.status), `a move the core table allows: ${where}`);
    // When the move happened: what it stamped, which must fall within the call.
    const stamped = [run.endedAt !== was.endedAt ? run.endedAt : null, run.startedAt !== was.startedAt ? run.startedAt : null].find((t) => t !== null) ?? null;
    if (stamped !== null) {
      const ms = Date.parse(stamped);
      assert.ok(ms >= from - CLOCK_SLACK_MS && ms <= to + CLOCK_SLACK_MS, `stamped within the call: ${where} at ${stamped}, called ${new Date(from).toISOString()}…${new Date(to).toISOString()}`);
    }
    const at = stamped ?? new Date(from).toISOString();
    assert.deepEqual({ startedAt: run.startedAt, endedAt: run.endedAt }, stampMember(was, run.status, at), `the member's timestamps follow stampMember: ${where}`);
    if (was.status !== run.status) set = moveSet(set, was.status, run.status, at, failsSet(model.rules.get(run.id)!, run.status, run.attempts, CAUSES[move]));
    model.members.set(run.id, { status: run.status, startedAt: run.startedAt, endedAt: run.endedAt, error: run.error });
  }
  assert.deepEqual(
    { counts: got.counts, failing: got.failing, status: got.status, startedAt: got.startedAt, endedAt: got.endedAt },
    { counts: set.counts, failing: set.failing, status: set.status, startedAt: set.startedAt, endedAt: set.endedAt },
    `the set is what moveSet makes of its members' moves (${move})`,
  );
  model.set = set;
}

export function runStatusPropertyContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`Store move rules: ${name}`, () => {
    test('random member moves keep every member and set equal to the rules of src/core/moves.ts', async () => {
      const store = await makeStore();
      try {
        await fc.assert(
          fc.asyncProperty(fc.array(rulesArb, { minLength: 1, maxLength: 4 }), fc.array(moveArb, { minLength: 1, maxLength: 14 }), (rules, moves) => play(store, rules, moves)),
          // A fixed seed: the gate gives the same answer for the same code (PROPERTY_SEED explores).
          { numRuns: 40, includeErrorInReport: true, seed: Number(process.env.PROPERTY_SEED ?? 20261126) },
        );
      } finally {
        await store.close();
      }
    });
  });
}
