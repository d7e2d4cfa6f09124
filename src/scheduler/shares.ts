/**
 * Scheduling policy: how big a share of a batch one worker takes. Pure
 * functions of numbers, so every rule is unit-tested without a store; the pool
 * (mechanism) asks, the store does what is decided. How long each member is
 * expected to take and the order members are claimed in are decided when a set
 * is planned (src/core/expected.ts).
 *
 * - Shares: each share of a batch (the cases of one Playwright entry) is one
 *   Playwright process, which pays the suite's start-up (Playwright, browsers,
 *   its webServer: seconds for a real suite) again. So a worker that no other
 *   live worker can help takes the whole batch; otherwise the batch's
 *   outstanding work (waiting, and held by the others) is split evenly by
 *   expected time among the workers that can run part of it (see sharePeers),
 *   so each pays the start-up once.
 *   A suite with a webServer on a fixed port runs one process per host at a
 *   time: other workers on this worker's host cannot help with it.
 */

/**
 * The least expected work per slot a share holds while more is waiting: each
 * share of a Playwright batch is one Playwright process, which costs about a
 * second to start (bench/README.md), so a share under ~5 s a slot would spend a
 * fifth of its time starting.
 */
export const MIN_SHARE_MS_PER_SLOT = 5000;

/**
 * The most expected work per slot one share holds by default (`--max-share`)
 * while other workers can help: a worker that joins later finds work, and a
 * wrong estimate costs at most this. 30 s costs one start of the suite per 30 s
 * of work a slot; a suite that starts slowly (a webServer) wants more.
 */
export const DEFAULT_MAX_SHARE_MS = 30_000;

/** A live worker as shares see it (WorkerLink.batchWorkers): where it runs, its slots, the batch's members it holds (how many, their expected ms). */
export interface PeerWorker {
  id: string;
  host: string;
  slots: number;
  holding: number;
  heldMs: number;
}

export interface PeerRequest {
  /** Every live worker, this one included. */
  workers: readonly PeerWorker[];
  me: { id: string; host: string };
  /** Slots one Playwright process of the batch uses at most (the entry's `workers`). */
  wanted: number;
  /** The suite starts a webServer on a fixed port: one process of it per host at a time. */
  hostBound: boolean;
}

/** The other workers that can run part of a batch: their slots for it, and the batch's work they hold already. */
export interface Peers {
  slots: number;
  heldMs: number;
}

/**
 * Who shares a batch with this worker. A worker gives a batch at most `wanted`
 * slots (one process). A host-bound batch runs one process per host: a host
 * counts once (its biggest worker), and this worker's own host not at all (what
 * its neighbours hold comes back to this worker: see takeShare).
 */
export function sharePeers({ workers, me, wanted, hostBound }: PeerRequest): Peers {
  const others = workers.filter((w) => w.id !== me.id && !(hostBound && w.host === me.host));
  const lane = (w: PeerWorker) => Math.min(w.slots, Math.max(1, wanted));
  const heldMs = sum(others.map((w) => w.heldMs));
  if (!hostBound) return { slots: sum(others.map(lane)), heldMs };
  const perHost = new Map<string, number>();
  for (const w of others) perHost.set(w.host, Math.max(perHost.get(w.host) ?? 0, lane(w)));
  return { slots: sum(perHost.values()), heldMs };
}

/** Members of a batch held by the other workers of this worker's host. */
export function heldOnHost(workers: readonly PeerWorker[], me: { id: string; host: string }): number {
  return sum(workers.filter((w) => w.host === me.host && w.id !== me.id).map((w) => w.holding));
}

function sum(values: Iterable<number>): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

export interface ShareRequest {
  /** Expected ms of the batch's waiting members, in claim order (longest first): those this worker just claimed, then those nobody holds. */
  waiting: readonly number[];
  /** Slots this worker gives the batch (its Playwright workers). */
  slots: number;
  /** The other workers that can run part of the batch (sharePeers). */
  peers: Peers;
  /** Most expected work per slot while others can help (DEFAULT_MAX_SHARE_MS); it wins over MIN_SHARE_MS_PER_SLOT. */
  maxShareMs: number;
}

/**
 * How many of `waiting` (a prefix: the longest) this worker takes. Alone (no
 * other worker can run any of it), all of it: one process, one start-up.
 * Otherwise its slots' part of the batch's outstanding work — what waits and
 * what the peers hold — which is the same part whether the workers claim one
 * after another or all at once, so each gets about the same and starts the
 * suite once; at least one member per slot, at least MIN_SHARE_MS_PER_SLOT a
 * slot while there is that much, and at most `maxShareMs` a slot (a worker that
 * joins later finds work; a wrong estimate costs at most that). A prefix keeps
 * a share's members alike in length, so the order Playwright runs them in (its
 * own: file, then declaration) matters little.
 */
export function batchShare({ waiting, slots, peers, maxShareMs }: ShareRequest): number {
  if (peers.slots <= 0) return waiting.length;
  const mine = Math.max(1, slots);
  const part = ((sum(waiting) + peers.heldMs) * mine) / (mine + peers.slots);
  const budget = Math.min(Math.max(part, mine * MIN_SHARE_MS_PER_SLOT), mine * maxShareMs);
  let taken = 0;
  let n = 0;
  while (n < waiting.length && (n < mine || taken + (waiting[n] as number) <= budget)) {
    taken += waiting[n] as number;
    n++;
  }
  return n;
}
