/**
 * The standard HTTP of a status that waits for news: a set status's entity tag,
 * `If-None-Match` (RFC 9110 §13.1.2, weak comparison) and the `wait`
 * preference of `Prefer` (RFC 7240 §4.3). Pure functions: the route applies them.
 */
import type { TestRunSetRecord } from '../core/types.js';

/** The most a client may ask the server to wait, in seconds. */
export const MAX_WAIT_SECONDS = 60;

/**
 * A strong tag of the status document. Within one set, the status and the
 * counts decide the rest of it (startedAt and endedAt are written once, with a
 * status change), so two equal tags are two equal documents.
 */
export function statusEtag(set: Pick<TestRunSetRecord, 'status' | 'counts'>): string {
  const c = set.counts;
  return `"${set.status}.${c.WAITING}.${c.RUNNING}.${c.SUCCESS}.${c.FAIL}"`;
}

/** Whether an If-None-Match header names `etag` (or is `*`): weak comparison, as the RFC asks for this header. */
export function noneMatchHits(header: string, etag: string): boolean {
  for (const part of header.split(',')) {
    const tag = part.trim();
    if (tag === '*' || tag === etag || (tag.startsWith('W/') && tag.slice(2) === etag)) return true;
  }
  return false;
}

/**
 * The seconds a `Prefer` header asks to wait, capped at MAX_WAIT_SECONDS; 0
 * when it asks none. A preference that is not understood is ignored, as RFC
 * 7240 tells servers to do (`wait=soon`, `wait=-1`).
 */
export function preferredWait(header: string | string[] | undefined): number {
  if (header === undefined) return 0;
  for (const preference of [header].flat().join(',').split(',')) {
    const [token = '', value = ''] = (preference.split(';')[0] ?? '').split('=', 2).map((s) => s.trim());
    if (token.toLowerCase() !== 'wait') continue;
    const seconds = /^"?(\d{1,9})"?$/.exec(value)?.[1];
    return seconds === undefined ? 0 : Math.min(Number(seconds), MAX_WAIT_SECONDS);
  }
  return 0;
}
