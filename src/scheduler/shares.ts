/**
 * Scheduling policy: how long each member is expected to take, in which order
 * members are claimed, and how big a share of a batch one worker takes. Pure
 * functions of numbers, so every rule is unit-tested without a store; the pool
 * (mechanism) asks, the store does what is decided.
 *
 * - Expected duration: the median of the test's recent successful runs in the
 *   same environment (the store keeps the last DURATION_SAMPLES). A test with no
 *   history counts as the median of its entry's tests that have one (the cases of
 *   one Playwright entry are alike), else of the set's, else DEFAULT_EXPECTED_MS.
 * - Claim order: longest expected first, ties in the config's order. The store
 *   inserts members in this order, so every claim (single members and batches)
 *   takes the longest waiting member first, with no sort on the claim path.
 * - Shares: a batch (the cases of one Playwright entry) is cut into shares by
 *   expected time, not count: a worker takes its slots' part of what is still
 *   unclaimed, so every live worker gets some, and the shares shrink as the set
 *   drains (guided self-scheduling), which keeps the end of a set even.
 */
import { batchKeyOf } from '../core/batch.js';
import type { TestSpec } from '../core/types.js';

/** Expected duration of a member when nothing in its set has any history. */
export const DEFAULT_EXPECTED_MS = 1000;

/**
 * The least expected work per slot a share holds while more is waiting: each
 * share of a Playwright batch is one Playwright process, which costs about a
 * second to start (bench/README.md), so a share under ~5 s a slot would spend a
 * fifth of its time starting.
 */
export const MIN_SHARE_MS_PER_SLOT = 5000;

/**
 * The most expected work per slot one share holds by default (`--max-share`):
 * a worker alone would otherwise take a whole long suite at once, and a worker
 * that joins later would find nothing left to help with. 30 s costs about one
 * Playwright start (~1 s) per 30 s of work, and a newcomer waits at most that.
 */
export const DEFAULT_MAX_SHARE_MS = 30_000;

export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : Math.round(((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2);
}

/** Each spec's expected duration (ms), by the rules above; `history` maps test names to recent successful durations. */
export function expectedDurations(specs: readonly TestSpec[], history: ReadonlyMap<string, readonly number[]>): number[] {
  const own = specs.map((spec) => median(history.get(spec.name) ?? []));
  const entryOf = (spec: TestSpec) => batchKeyOf(spec) ?? spec.name;
  const byEntry = new Map<string, number[]>();
  specs.forEach((spec, i) => {
    const known = own[i];
    if (known === undefined) return;
    const key = entryOf(spec);
    byEntry.set(key, [...(byEntry.get(key) ?? []), known]);
  });
  const ofSet = median(own.filter((ms): ms is number => ms !== undefined)) ?? DEFAULT_EXPECTED_MS;
  return specs.map((spec, i) => own[i] ?? median(byEntry.get(entryOf(spec)) ?? []) ?? ofSet);
}

/** Indexes into `expected`, longest first; equal ones keep their order. */
export function claimOrder(expected: readonly number[]): number[] {
  return expected.map((ms, i) => ({ ms, i })).sort((a, b) => b.ms - a.ms || a.i - b.i).map(({ i }) => i);
}

export interface ShareRequest {
  /** Expected ms of the batch's waiting members, in claim order (longest first): those this worker just claimed, then those nobody holds. */
  waiting: readonly number[];
  /** Slots this worker gives the batch (its Playwright workers). */
  slots: number;
  /** Slots of every live worker, this one's included. */
  liveSlots: number;
  /** Most expected work per slot (DEFAULT_MAX_SHARE_MS); it wins over MIN_SHARE_MS_PER_SLOT. */
  maxShareMs: number;
}

/**
 * How many of `waiting` (a prefix: the longest) this worker takes. Its share is
 * its slots' part of the batch's whole expected work, at least one member per
 * slot, at least MIN_SHARE_MS_PER_SLOT a slot while there is that much, and at
 * most `maxShareMs` a slot. Alone (its slots are all the live slots), it takes
 * everything up to that most: one process for a suite of ordinary length.
 * A prefix keeps a share's members alike in length, so the order Playwright
 * runs them in (its own: file, then declaration) matters little.
 */
export function batchShare({ waiting, slots, liveSlots, maxShareMs }: ShareRequest): number {
  const mine = Math.max(1, slots);
  const all = Math.max(liveSlots, mine);
  const part = (waiting.reduce((a, b) => a + b, 0) * mine) / all;
  const budget = Math.min(Math.max(part, mine * MIN_SHARE_MS_PER_SLOT), mine * maxShareMs);
  let taken = 0;
  let n = 0;
  while (n < waiting.length && (n < mine || taken + (waiting[n] as number) <= budget)) {
    taken += waiting[n] as number;
    n++;
  }
  return n;
}
