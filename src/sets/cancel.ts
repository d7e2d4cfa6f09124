/**
 * Ending a set early: the errors its cancelled members get, and fail fast
 * (an environment's `maxFailures`), which workers check after each failure they
 * write. The store does the cancel itself (SetsStore.cancel), atomically.
 */
import { isFinal } from '../core/states.js';
import type { Store } from '../store/store.js';

/** The error of a member cancelled by a key (`POST …/cancel`, `runset cancel`, the dashboard). */
export const CANCELLED = 'cancelled';

export function maxFailuresError(limit: number): string {
  return `${CANCELLED}: maxFailures ${limit} reached`;
}

/**
 * Cancels the rest of the set once its failures reach its maxFailures; true
 * when this call did. Two workers crossing the limit together both try: the
 * store lets one cancel and tells the other the set had ended.
 */
export async function enforceMaxFailures(store: Store, setId: string): Promise<boolean> {
  const control = await store.sets.control(setId);
  if (control?.maxFailures == null || control.cancellation) return false;
  const set = await store.sets.get(setId);
  if (!set || isFinal(set.status) || set.failing < control.maxFailures) return false;
  const result = await store.sets.cancel(setId, { byKeyId: null, byKeyName: null, error: maxFailuresError(control.maxFailures) });
  return result.found && result.cancelled;
}
