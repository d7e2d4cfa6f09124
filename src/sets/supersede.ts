/**
 * Superseded sets: a new set with a concurrency group cancels the group's older
 * unfinished sets of its environment, queued or running (GitHub Actions'
 * `cancel-in-progress`), through the one cancel path (SetsStore.cancel): their
 * unfinished members end FAIL with `superseded by <new id>`. Called once the
 * new set is created; of two sets of a group created at once, the store's
 * creation order (src/store/queue.ts) says which is newer, so exactly the older
 * one goes.
 */
import type { Store } from '../store/store.js';

export function supersededError(newerId: string): string {
  return `superseded by ${newerId}`;
}

/** Cancels the sets `setId` supersedes; returns the ids this call ended. */
export async function supersedeOlder(store: Store, setId: string): Promise<string[]> {
  const ended: string[] = [];
  for (const id of await store.sets.olderInGroup(setId)) {
    const result = await store.sets.cancel(id, { byKeyId: null, byKeyName: null, error: supersededError(setId) });
    if (result.found && result.cancelled) ended.push(id);
  }
  return ended;
}
