/**
 * The set-status rule, checked on every backend by random sequences of member
 * moves (fast-check): claims, reserved claims and their starts, finishes that
 * pass or fail, releases, leases that expire and are reaped, and cancels. After
 * every move each stored set must be what the one rule in core/states.ts
 * (deriveSetStatus) says of its members: the PostgreSQL store writes that rule in
 * SQL and the SQLite store in TypeScript, and this is what ties the two.
 *
 * Checked after each move:
 * - counts are the members' states, and add up to the number of members;
 * - status = deriveSetStatus(counts, a member has ever started);
 * - startedAt is set once a member has started (or, for a set cancelled before
 *   any did, when it ended) and never changes after;
 * - endedAt is set exactly when the status is final, and is the last member end;
 * - a set never moves backwards (WAITING → RUNNING → SUCCESS | FAIL).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import type { Store } from '../../src/store/store.js';
import { leaseOf } from '../../src/store/store.js';
import type { ClaimedRun } from '../../src/core/types.js';
import { deriveSetStatus, emptyCounts, RUN_STATES, type RunState } from '../../src/core/states.js';
import { newSet } from './fixtures.js';

type Move =
  | { kind: 'claim'; limit: number; reserve: number }
  | { kind: 'start'; pick: number }
  | { kind: 'finish'; pick: number; pass: boolean }
  | { kind: 'release'; pick: number }
  | { kind: 'expire'; limit: number }
  | { kind: 'cancel' };

const moveArb: fc.Arbitrary<Move> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('claim' as const), limit: fc.integer({ min: 1, max: 3 }), reserve: fc.integer({ min: 0, max: 1 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('start' as const), pick: fc.nat() }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('finish' as const), pick: fc.nat(), pass: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('expire' as const), limit: fc.integer({ min: 1, max: 2 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'cancel' as const }) },
);

const ORDER: Record<RunState, number> = { WAITING: 0, RUNNING: 1, SUCCESS: 2, FAIL: 2 };
const LONG_LEASE_MS = 60_000;
/** Short enough to expire within a move, long enough for the claim's own statement to finish under it. */
const SHORT_LEASE_MS = 30;
const MAX_LOST_LEASES = 2;

/** One run of a sequence: a set of `members` on a fresh worker id, moved by `moves`. */
async function play(store: Store, members: number, moves: readonly Move[]): Promise<void> {
  const set = newSet(members);
  await store.sets.create(set);
  const workerId = `property-${set.id.slice(-8)}`;
  let held: ClaimedRun[] = [];
  let reserved: ClaimedRun[] = [];
  let before = await check(store, set.id, members, null);
  for (const move of moves) {
    const pickFrom = <T>(list: T[], pick: number): T | undefined => (list.length === 0 ? undefined : list[pick % list.length]);
    switch (move.kind) {
      case 'claim': {
        const claimed = await store.claims.claimRuns({ workerId, limit: move.limit, leaseMs: LONG_LEASE_MS, reserve: Math.min(move.reserve, move.limit) });
        const cut = claimed.length - Math.min(move.reserve, claimed.length);
        held.push(...claimed.slice(0, cut));
        reserved.push(...claimed.slice(cut));
        break;
      }
      case 'start': {
        const run = pickFrom(reserved, move.pick);
        if (!run) break;
        reserved = reserved.filter((r) => r !== run);
        if (await store.claims.startRun(leaseOf(run))) held.push(run);
        break;
      }
      case 'finish': {
        const run = pickFrom(held, move.pick);
        if (!run) break;
        held = held.filter((r) => r !== run);
        await store.claims.finishRun(leaseOf(run), { status: move.pass ? 'SUCCESS' : 'FAIL', attempts: 1, error: move.pass ? null : 'failed', output: '', durationMs: 1 });
        break;
      }
      case 'release': {
        const run = pickFrom(held, move.pick) ?? pickFrom(reserved, move.pick);
        if (!run) break;
        held = held.filter((r) => r !== run);
        reserved = reserved.filter((r) => r !== run);
        await store.claims.releaseRuns([leaseOf(run)]);
        break;
      }
      case 'expire': {
        // A worker that claims and vanishes: its leases run out and the reaper acts.
        await store.claims.claimRuns({ workerId: `${workerId}-lost`, limit: move.limit, leaseMs: SHORT_LEASE_MS });
        await sleep(SHORT_LEASE_MS + 20);
        await store.claims.reapExpired(MAX_LOST_LEASES);
        break;
      }
      case 'cancel':
        await store.sets.cancel(set.id, { byKeyId: null, byKeyName: null, error: 'cancelled' });
        break;
    }
    before = await check(store, set.id, members, before);
  }
  // Claims take the oldest set's members first, from any set: end this one, so
  // that the next sequence on the same store claims only its own.
  await store.sets.cancel(set.id, { byKeyId: null, byKeyName: null, error: 'cancelled' });
  await check(store, set.id, members, before);
}

interface Seen {
  status: RunState;
  startedAt: string | null;
  everStarted: boolean;
}

/** Compares the stored set with the rule applied to its stored members; returns what the next check compares against. */
async function check(store: Store, setId: string, members: number, before: Seen | null): Promise<Seen> {
  const [got, runs] = await Promise.all([store.sets.get(setId), store.sets.listRuns(setId)]);
  assert.ok(got, 'the set is there');
  const counts = emptyCounts();
  for (const run of runs) counts[run.status]++;
  const everStarted = (before?.everStarted ?? false) || runs.some((r) => r.startedAt !== null);
  const expected = deriveSetStatus(counts, everStarted);
  assert.equal(runs.length, members, 'every member is listed');
  assert.deepEqual(got.counts, counts, 'counts are the members’ states');
  assert.equal(RUN_STATES.reduce((sum, s) => sum + got.counts[s], 0), members, 'counts add up to the members');
  assert.equal(got.status, expected, `status follows deriveSetStatus(${JSON.stringify(counts)}, ${everStarted})`);
  if (before) {
    assert.ok(ORDER[got.status] >= ORDER[before.status], `never backwards: ${before.status} → ${got.status}`);
    if (before.startedAt !== null) assert.equal(got.startedAt, before.startedAt, 'startedAt never changes once set');
  }
  const final = got.status === 'SUCCESS' || got.status === 'FAIL';
  // A set cancelled before any member started ends with startedAt = endedAt: it did start and end, at once.
  assert.equal(got.startedAt !== null, everStarted || final, 'startedAt is set once a member has started, or the set has ended');
  if (final && !everStarted) assert.equal(got.startedAt, got.endedAt, 'a set that ended before any member started, started when it ended');
  assert.equal(got.endedAt !== null, final, 'endedAt is set exactly when the set has ended');
  if (final) {
    const lastEnd = runs.map((r) => r.endedAt).filter((e): e is string => e !== null).sort().at(-1) ?? null;
    assert.equal(got.endedAt, lastEnd, 'endedAt is the last member end');
  }
  return { status: got.status, startedAt: got.startedAt, everStarted };
}

export function runStatusPropertyContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`Store status rule: ${name}`, () => {
    test('random member moves keep every set equal to deriveSetStatus of its members', async () => {
      const store = await makeStore();
      try {
        await fc.assert(
          fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.array(moveArb, { minLength: 1, maxLength: 14 }), (members, moves) => play(store, members, moves)),
          // A fixed seed: the gate gives the same answer for the same code (FUZZ_SEED explores, as for the API fuzz).
          { numRuns: 40, includeErrorInReport: true, seed: Number(process.env.PROPERTY_SEED ?? 20261126) },
        );
      } finally {
        await store.close();
      }
    });
  });
}
