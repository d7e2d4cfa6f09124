/**
 * Bounds on what a tool result carries: an agent's context is small and
 * expensive, so long texts are cut with a note saying how much was left out and
 * where the whole is. One place for every limit.
 */
export const BOUNDS = Object.freeze({
  /** A member's error message. */
  errorChars: 2_000,
  /** The first lines of a member's output tail. */
  outputLines: 30,
  outputChars: 3_000,
  /** Playwright's error context (the page's accessibility snapshot at the failure) in a tool result. */
  errorContextChars: 6_000,
  /** The same, read as a resource (attached on purpose: more room). */
  errorContextResourceChars: 40_000,
  /** Failures detailed per get_set_result call (default and most). */
  failuresDefault: 5,
  failuresMax: 20,
  /** Failed member names listed after a wait. */
  failedNames: 20,
  /** Artifact links per failure. */
  artifacts: 10,
  /** Recent outcomes shown of a test's history. */
  outcomes: 10,
});

export interface Clipped {
  text: string;
  /** Characters left out; 0 when whole. */
  omitted: number;
}

/** The first `max` characters, with a note (and where to read the rest) when cut. */
export function clip(text: string, max: number, whole?: string): Clipped {
  if (text.length <= max) return { text, omitted: 0 };
  const omitted = text.length - max;
  const where = whole ? `; the whole text: ${whole}` : '';
  return { text: `${text.slice(0, max)}\n… [${omitted} more characters cut${where}]`, omitted };
}

/** The first `lines` lines of `text` (and at most `max` characters), with a note when cut. */
export function firstLines(text: string, lines: number, max: number, whole?: string): Clipped {
  const all = text.split('\n');
  if (all.length <= lines) return clip(text, max, whole);
  const head = clip(all.slice(0, lines).join('\n'), max, whole);
  const where = whole ? `; the whole output: ${whole}` : '';
  return { text: `${head.text}\n… [${all.length - lines} more lines cut${where}]`, omitted: text.length - head.text.length };
}
