/**
 * The deadline sweep: every API process looks, once a second, for unfinished
 * sets past their deadline (SetsStore.overdue, judged by the store's clock) and
 * cancels each through the one cancel path (SetsStore.cancel), its unfinished
 * members ending FAIL with `set timeout 60m reached` (src/core/deadlines.ts).
 * Several API processes may sweep one store: a cancel of a set that another
 * already ended changes nothing.
 */
import type { Logger } from 'pino';
import { setTimeoutError } from '../core/deadlines.js';
import type { Store } from '../store/store.js';

/** How often the sweep looks: a set ends at most about this long after its deadline. */
export const DEADLINE_SWEEP_MS = 1000;
/** Sets cancelled per look, at most; more wait for the next. */
const BATCH = 100;

/** Cancels the sets past their deadline (at most BATCH); returns how many this call ended. */
export async function cancelOverdueSets(store: Store): Promise<number> {
  let ended = 0;
  for (const { id, timeoutSeconds } of await store.sets.overdue(BATCH)) {
    const result = await store.sets.cancel(id, { byKeyId: null, byKeyName: null, error: setTimeoutError(timeoutSeconds) });
    if (result.found && result.cancelled) ended++;
  }
  return ended;
}

/** Starts the sweep; the function returned stops it, after the look under way. */
export function startDeadlineSweep(opts: { store: Store; logger: Logger; everyMs?: number }): () => Promise<void> {
  const everyMs = opts.everyMs ?? DEADLINE_SWEEP_MS;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  let stopped = false;
  const look = async () => {
    try {
      const ended = await cancelOverdueSets(opts.store);
      if (ended > 0) opts.logger.info({ sets: ended }, 'sets past their deadline were cancelled');
    } catch (err) {
      opts.logger.warn({ err }, 'the deadline sweep failed; it tries again');
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      current = look().finally(schedule);
    }, everyMs);
    timer.unref();
  };
  schedule();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await current;
  };
}
