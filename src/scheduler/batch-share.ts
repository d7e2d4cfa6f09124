/**
 * The mechanism side of a share: reads what of a batch is still waiting, and
 * who else could run part of it, from the store and asks the policy
 * (./shares.ts) how much of it this worker takes.
 */
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import type { ClaimedRun, TestSpec } from '../core/types.js';
import type { WorkerLink } from '../worker-link/link.js';
import { batchShare, DEFAULT_MAX_SHARE_MS, heldOnHost, sharePeers, type PeerWorker } from './shares.js';
import { webServerPorts, type WebServerGate } from './webserver-gate.js';
import type { HeldLock } from './host-lock.js';


/** Most members one batch takes: enough for one Playwright process per suite, few enough to heartbeat cheaply. */
const MAX_BATCH = 256;

/** The slots one process of a batch uses at most: a suite's `workers`, default half the cores, as Playwright does. */
export function wantedSlots(spec: TestSpec): number {
  return spec.type === 'http' || spec.type === 'command' ? 1 : (spec.workers ?? Math.max(1, Math.floor(availableParallelism() / 2)));
}

export interface ShareContext {
  /** Slots this worker gives the batch, and the most one process of it uses (the entry's `workers`). */
  slots: number;
  wanted: number;
  maxShareMs: number;
  /** Most members to consider (one batch's most). */
  limit: number;
  me: { id: string; host: string };
  /** The live workers, each with what it holds of the batch (the workers registry); absent: this worker is alone. */
  peers?: (setId: string, batchKey: string) => Promise<PeerWorker[]>;
}

/** How many members of a batch this worker takes, `claimed` (the longest waiting, already held) included. */
async function sizeShare(link: WorkerLink, claimed: readonly ClaimedRun[], ctx: ShareContext): Promise<number> {
  const head = claimed[0] as ClaimedRun;
  const key = head.batchKey as string;
  const [waiting, workers] = await Promise.all([link.waitingWork(head.setId, key, ctx.limit), ctx.peers?.(head.setId, key) ?? []]);
  const hostBound = webServerPorts(head.spec).length > 0;
  const peers = sharePeers({ workers, me: ctx.me, wanted: ctx.wanted, hostBound });
  // A host-bound batch no other host can help with is this worker's whole: every member, however
  // the two reads above raced a neighbour's give-back (read as held by the first and as held by no
  // one by the second, a member counted by neither would wait for a second start of the suite).
  if (hostBound && peers.slots <= 0) return ctx.limit;
  const share = batchShare({ waiting: [...claimed.map((r) => r.expectedMs), ...waiting], slots: ctx.slots, peers, maxShareMs: ctx.maxShareMs });
  // What a neighbour on this host holds of a host-bound batch comes back to this share (see
  // takeShare): counted now, since it may be given back before the share is claimed, and then
  // it is neither held nor within the share.
  return hostBound ? share + heldOnHost(workers, ctx.me) : share;
}

/** How long a share waits for members that other workers of this host claimed but cannot run (see takeShare). */
const STRAY_WAIT_MS = 2000;
const STRAY_POLL_MS = 50;

export interface ShareDeps {
  leaseMs: number;
  logger: Logger;
  giveBack(runs: ClaimedRun[]): Promise<void>;
}

/**
 * This worker's share of a batch, held: `claimed` cut to the share, the rest of
 * the share claimed, what was claimed beyond it given back. Without the figures
 * it runs what is claimed; the rest waits for the next claim.
 *
 * A suite with a fixed-port webServer: this worker holds the host's lock on the
 * port, so another worker of this host that claimed members of the batch at the
 * same moment cannot run them and gives them back at once. The share waits for
 * those (briefly) instead of leaving them to a Playwright process of their own
 * after this one: a second start of the suite.
 */
export async function takeShare(link: WorkerLink, claimed: readonly ClaimedRun[], ctx: ShareContext, deps: ShareDeps): Promise<ClaimedRun[]> {
  const head = claimed[0] as ClaimedRun;
  let share = Math.min(await sizeShare(link, claimed, ctx).catch((err: unknown) => {
    deps.logger.warn({ err, run: head.id }, 'sizing a share of a batch failed');
    return claimed.length;
  }), ctx.limit);
  await deps.giveBack(claimed.slice(Math.max(1, share)));
  const runs = [...claimed.slice(0, Math.max(1, share))];
  const claimMore = async () => {
    if (runs.length >= share) return;
    const more = await link
      .claimBatch({ workerId: head.workerId, setId: head.setId, batchKey: head.batchKey as string, limit: share - runs.length, leaseMs: deps.leaseMs })
      .catch((err: unknown) => {
        deps.logger.warn({ err, run: head.id }, 'claiming the rest of a share failed');
        return [];
      });
    runs.push(...more);
  };
  await claimMore();
  if (webServerPorts(head.spec).length === 0 || !ctx.peers) return runs;
  for (const until = Date.now() + STRAY_WAIT_MS; ; ) {
    const stray = heldOnHost(await ctx.peers(head.setId, head.batchKey as string).catch(() => []), ctx.me);
    // Whoever holds them gives them back; they would need another start of the suite on this host.
    share = Math.min(ctx.limit, Math.max(share, runs.length + stray));
    // Claimed after every look, the last one too: a neighbour's member counted in the share may
    // have come back between two looks (then no one holds it, and only a claim brings it here).
    await claimMore();
    if (stray === 0 || Date.now() >= until) break;
    await new Promise((resolve) => setTimeout(resolve, STRAY_POLL_MS));
  }
  return runs;
}

/** What holding a share needs beyond takeShare's: the host's webServer locks. */
export interface HoldShareDeps extends ShareDeps, Pick<ShareContext, 'me' | 'peers'> {
  link: WorkerLink;
  gate: Pick<WebServerGate, 'enter'>;
  maxShareMs?: number;
}

/**
 * A share of the batch of `claimed` (members of one set with one batch key,
 * claimed reserved) for a worker with `free` slots: the host's locks on the
 * suite's webServer ports (WebServerGate), then this worker's share (see
 * takeShare: all of it when no other worker can help) and the slots it may use.
 * Undefined, the members given back, when no slot is free (an earlier batch of
 * the same claim took them) or another batch on this host holds a port.
 */
export async function holdShare(
  claimed: readonly ClaimedRun[],
  free: number,
  deps: HoldShareDeps,
): Promise<{ runs: ClaimedRun[]; slots: number; lock: HeldLock } | undefined> {
  const head = claimed[0] as ClaimedRun;
  const wanted = wantedSlots(head.spec);
  const slots = Math.min(wanted, free);
  const lock = slots > 0 ? await deps.gate.enter(head) : undefined;
  if (!lock) {
    await deps.giveBack([...claimed]);
    return undefined;
  }
  const runs = await takeShare(deps.link, claimed, {
    slots, wanted, maxShareMs: deps.maxShareMs ?? DEFAULT_MAX_SHARE_MS, limit: MAX_BATCH, me: deps.me, peers: deps.peers,
  }, deps);
  return { runs, slots, lock };
}
