/**
 * The durations sub-store: each test's latest successful durations per
 * environment, what expected durations, claim order and shares come from
 * (src/core/expected.ts, src/scheduler/shares.ts).
 */
import type { DurationSample } from '../core/types.js';

/** How many of a test's latest successful durations its history keeps (its expected duration is their median). */
export const DURATION_SAMPLES = 10;

export interface DurationsStore {
  /** Appends successful durations to each test's history (newest last), keeping the last DURATION_SAMPLES per test and environment. */
  record(samples: readonly DurationSample[]): Promise<void>;
  /** Every test's kept durations in one environment, oldest first, by test name. */
  history(env: string): Promise<Map<string, number[]>>;
}
