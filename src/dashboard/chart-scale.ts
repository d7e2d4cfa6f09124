/**
 * The arithmetic of the dashboard's SVG charts: where values go on an axis and
 * which round values the axis names. Pure (no DOM, no imports): unit-tested,
 * bundled as is. Hand-made rather than a chart library: two charts need a line
 * of points and two labelled axes, a few hundred bytes against a library's tens
 * of kilobytes.
 */

/** Maps [d0, d1] onto [r0, r1]; a domain of one value maps to the middle of the range. */
export function linearScale(d0: number, d1: number, r0: number, r1: number): (value: number) => number {
  if (d1 === d0) return () => (r0 + r1) / 2;
  return (value) => r0 + ((value - d0) / (d1 - d0)) * (r1 - r0);
}

/**
 * Round tick values from 0 to the first at or above `max`, in steps of 1, 2 or
 * 5 × 10^k chosen for about `count` steps: the axis spans its ticks.
 */
export function niceTicks(max: number, count = 4): number[] {
  if (!(max > 0)) return [0, 1];
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough)!;
  const ticks: number[] = [];
  let value = 0;
  while (value < max) {
    ticks.push(value);
    value = Number((value + step).toPrecision(12)); // 0.1 + 0.2 stays 0.3
  }
  ticks.push(value);
  return ticks;
}
