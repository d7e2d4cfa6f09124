/**
 * How long each member is expected to take, and so the order members are
 * claimed in: decided once, when a set is planned (src/sets/plan.ts), and read
 * by the scheduler's share sizing and by test history. Pure functions of numbers.
 *
 * - Expected duration: the median of the test's recent successful runs in the
 *   same environment (the store keeps the last DURATION_SAMPLES). A test with no
 *   history counts as the median of its entry's tests that have one (the cases of
 *   one Playwright entry are alike), else of the set's, else DEFAULT_EXPECTED_MS.
 * - Claim order: longest expected first, ties in the config's order. The store
 *   inserts members in this order, so every claim (single members and batches)
 *   takes the longest waiting member first, with no sort on the claim path.
 */
import { batchKeyOf } from './batch.js';
import type { TestSpec } from './types.js';

/** Expected duration of a member when nothing in its set has any history. */
export const DEFAULT_EXPECTED_MS = 1000;

/** The middle value (the mean of the two middle ones, rounded, for an even count); undefined for none. */
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
