/**
 * Set deadlines: a set not ended `timeoutSeconds` after its creation (queue
 * time included) is cancelled like `cancel` does, its unfinished members
 * ending FAIL with `set timeout 60m reached`. The environment's `setTimeout`
 * (default 60m) is both the default and the most a create body's
 * `timeoutSeconds` may ask for. The sweep is src/sets/deadlines.ts.
 */

export const DEFAULT_SET_TIMEOUT_SECONDS = 3600;
export const MAX_SET_TIMEOUT_SECONDS = 7 * 86_400;

/** A set timeout as people wrote it: whole minutes as `60m`, else seconds (`90s`). */
export function setTimeoutText(seconds: number): string {
  return seconds % 60 === 0 ? `${seconds / 60}m` : `${seconds}s`;
}

/** The error the members of a set cancelled at its deadline end with. */
export function setTimeoutError(seconds: number): string {
  return `set timeout ${setTimeoutText(seconds)} reached`;
}

/** When a set created at `createdAt` (ISO) with this timeout is cancelled, as ISO. */
export function deadlineOf(createdAt: string, seconds: number): string {
  return new Date(Date.parse(createdAt) + seconds * 1000).toISOString();
}
