/**
 * The mechanism side of a share: reads what of a batch is still waiting from
 * the store and asks the policy (./shares.ts) how much of it this worker takes.
 */
import type { ClaimedRun } from '../core/types.js';
import type { Store } from '../store/store.js';
import { batchShare } from './shares.js';

export { DEFAULT_MAX_SHARE_MS } from './shares.js';

/** How many members of a batch this worker takes, `claimed` (the longest waiting, already held) included. */
export async function sizeShare(
  store: Store,
  claimed: readonly ClaimedRun[],
  opts: { slots: number; liveSlots: number; maxShareMs: number; limit: number },
): Promise<number> {
  const head = claimed[0] as ClaimedRun;
  const waiting = await store.waitingWork(head.setId, head.batchKey as string, opts.limit);
  return batchShare({ waiting: [...claimed.map((r) => r.expectedMs), ...waiting], slots: opts.slots, liveSlots: opts.liveSlots, maxShareMs: opts.maxShareMs });
}
