/**
 * An environment's pass rate over time, as data: per day, how many of its
 * sets ended and passed, and how many of their tests did. Pure (no DOM, no
 * imports): unit-tested, bundled as is. The day of a set is the day it was
 * created, in whatever calendar `dayOf` keeps (the page passes the viewer's).
 */

export interface EndedCounts {
  SUCCESS: number;
  FAIL: number;
}

export interface TrendSet {
  status: string;
  createdAt: string;
  progress: { counts: EndedCounts };
}

export interface DayRate {
  /** The key `dayOf` gave, e.g. 2026-11-25. */
  day: string;
  sets: number;
  setsPassed: number;
  tests: number;
  testsPassed: number;
}

/** Days with at least one ended set, oldest first; sets still waiting or running are left out. */
export function passRateByDay(sets: readonly TrendSet[], dayOf: (iso: string) => string): DayRate[] {
  const days = new Map<string, DayRate>();
  for (const set of sets) {
    if (set.status !== 'SUCCESS' && set.status !== 'FAIL') continue;
    const day = dayOf(set.createdAt);
    const rate = days.get(day) ?? { day, sets: 0, setsPassed: 0, tests: 0, testsPassed: 0 };
    rate.sets += 1;
    rate.setsPassed += set.status === 'SUCCESS' ? 1 : 0;
    rate.tests += set.progress.counts.SUCCESS + set.progress.counts.FAIL;
    rate.testsPassed += set.progress.counts.SUCCESS;
    days.set(day, rate);
  }
  return [...days.values()].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
}

/** A share as a whole percentage (null when there is nothing to share). */
export function percent(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 100);
}
