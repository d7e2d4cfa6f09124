/**
 * `runset trigger --wait` on a queued set: while the set waits for its
 * environment's places (maxConcurrentSets), say how many sets are ahead, once
 * per change ("queued: 2 sets ahead"). The status alone cannot say it: a queued
 * set is WAITING like any set no worker has reached yet, and a long-polled
 * status read is only answered when the set itself changes, so the place is
 * read from the set's details, every `intervalMs`, until the set's turn comes.
 */
import type { RunsetClient } from './client.js';
import { sleep } from './retry.js';

export interface QueueWatchOptions {
  intervalMs: number;
  signal: AbortSignal;
  /** Writes one line (the trigger's progress notes). */
  note: (line: string) => void;
}

export function queuedText(ahead: number, limit: number): string {
  return `queued: ${ahead} set${ahead === 1 ? '' : 's'} ahead (the environment runs ${limit} set${limit === 1 ? '' : 's'} at a time)`;
}

/**
 * Resolves once the set is not queued (at once for a set that never was), or
 * when `signal` aborts, or on the first failed read: the wait itself reports
 * failures; this is only a courtesy line.
 */
export async function watchQueue(client: RunsetClient, id: string, opts: QueueWatchOptions): Promise<void> {
  let shown: number | undefined;
  for (;;) {
    let place;
    try {
      place = await client.getQueuePlace(id, { signal: opts.signal });
    } catch {
      return;
    }
    if (place === null) return; // its turn came: the status lines say the rest
    if (place.ahead !== shown) opts.note(queuedText(place.ahead, place.limit));
    shown = place.ahead;
    try {
      await sleep(opts.intervalMs, opts.signal);
    } catch {
      return;
    }
  }
}
