/**
 * Scheduling policy: how long each member is expected to take, in which order
 * members are claimed, and how big a share of a batch one worker takes. Pure
 * functions of numbers, so every rule is unit-tested without a store; the pool
 * (mechanism) asks, the store does what is decided.
 *
 * - Expected duration: the median of the test's recent successful runs in the
 *   same environment (the store keeps the last DURATION_SAMPLES). A test with no
 *   history counts as the median of its entry's tests that have one (the cases of
 *   one Playwright entry are alike), else of the set's, else DEFAULT_EXPECTED_MS.
 * - Claim order: longest expected first, ties in the config's order. The store
 *   inserts members in this order, so every claim (single members and batches)
 *   takes the longest waiting member first, with no sort on the claim path.
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
import { batchKeyOf } from '../core/batch.js';
import type { TestSpec } from '../core/types.js';

/** Expected duration of a member when nothing in its set has any history. */
export const DEFAULT_EXPECTED_MS = 1000;

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

export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : Math.round(((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2);
}

/** Each spec's expected duration (ms), by the rules above; `history` maps test names to recent successful durations. */
export function expectedDurations(specs: readonly TestSpec[], history: ReadonlyMap<string, readonly number[]>): number[] {
  const own = specs.map((spec) => median(history.get(spec.name) ?? []));
  const entryOf = (spec: TestSpec) => batchKeyOf(spec) ?? spec.name;
  const byEntry = new Map<string, number[]>();
  specs.forEach((spec, i) => {
    const known = own[i];
    if (known === undefined) return;
    const key = entryOf(spec);
    byEntry.set(key, [...(byEntry.get(key) ?? []), known]);
  });
  const ofSet = median(own.filter((ms): ms is number => ms !== undefined)) ?? DEFAULT_EXPECTED_MS;
  return specs.map((spec, i) => own[i] ?? median(byEntry.get(entryOf(spec)) ?? []) ?? ofSet);
}

/** Indexes into `expected`, longest first; equal ones keep their order. */
export function claimOrder(expected: readonly number[]): number[] {
  return expected.map((ms, i) => ({ ms, i })).sort((a, b) => b.ms - a.ms || a.i - b.i).map(({ i }) => i);
}

/** A live worker as shares see it (Store.batchWorkers): where it runs, its slots, the batch's members it holds (how many, their expected ms). */
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
