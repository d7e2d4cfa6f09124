/**
 * The store, seen by the metrics: a Proxy that every part of a process with
 * metrics on is handed instead of the store itself (main.ts), so the recording
 * points stay out of the routes, the scheduler and the store backends:
 *
 * - every failed operation counts as a store error, named by its sub-store and
 *   method (`sets.get`, `claims.finishRun`…);
 * - a created set counts by environment (sets.create, and sets.createOnce when it created);
 * - claims stamp the members they hand out, for the claim-to-start latency;
 * - expired leases reaped count as lost, requeued or failed;
 * - set events fanned out to webhooks count ended sets by environment and
 *   status: the outbox hands each event to exactly one process (see
 *   src/store/webhook-outbox.ts), so each set counts once across the fleet;
 *   the same read observes each ended set's wait, creation to first start.
 *
 * Without metrics the store is used as it is: no Proxy, no cost.
 */
import { performance } from 'node:perf_hooks';
import type { ClaimedRun, NewTestRunSet } from '../core/types.js';
import type { SetEvent } from '../core/webhooks.js';
import type { CreatedOnce, FinishedAndClaimed, ReapResult, Store } from '../store/store.js';
import type { WebhookOutbox } from '../store/webhook-outbox.js';
import type { RunsetMetrics } from './registry.js';

type Method = (...args: unknown[]) => unknown;
/** What to record once an operation succeeded: its arguments, its result, and when it was asked for. */
type After = (args: unknown[], result: unknown, askedAt: number) => void;

export function instrumentStore(store: Store, metrics: RunsetMetrics): Store {
  const after: Partial<Record<SubStore, Record<string, After>>> = {
    sets: {
      create: (args) => metrics.setsCreated.inc({ env: (args[0] as NewTestRunSet).env }),
      createOnce: (args, result) => {
        if ((result as CreatedOnce).created) metrics.setsCreated.inc({ env: (args[0] as NewTestRunSet).env });
      },
    },
    claims: {
      claimRuns: (_args, result, askedAt) => metrics.claimed(result as ClaimedRun[], askedAt),
      claimBatch: (_args, result, askedAt) => metrics.claimed(result as ClaimedRun[], askedAt),
      finishAndClaim: (_args, result, askedAt) => metrics.claimed((result as FinishedAndClaimed).claimed, askedAt),
      reapExpired: (_args, result) => {
        const { requeued, failed } = result as ReapResult;
        if (requeued > 0) metrics.leasesLost.inc({ outcome: 'requeued' }, requeued);
        if (failed > 0) metrics.leasesLost.inc({ outcome: 'failed' }, failed);
      },
    },
  };
  // Each sub-store is wrapped once, when first asked for (a SQLite store makes
  // them on migrate), its operations named `<sub-store>.<method>` (sets.get, claims.claimRuns…).
  const wrapped = new Map<string, unknown>();
  const subStore = (name: SubStore): unknown => {
    let proxy = wrapped.get(name);
    if (proxy === undefined) {
      proxy = instrument(store[name] as object, metrics, `${name}.`, after[name] ?? {}, (outbox, prop, method) =>
        name === 'webhooks' && prop === 'fanOut' ? countEndedSets(store, metrics, outbox as WebhookOutbox, method) : undefined,
      );
      wrapped.set(name, proxy);
    }
    return proxy;
  };
  return new Proxy(store, {
    get: (target, prop, receiver) => ((SUB_STORES as readonly unknown[]).includes(prop) ? subStore(prop as SubStore) : (Reflect.get(target, prop, receiver) as unknown)),
  });
}

const SUB_STORES = ['sets', 'setViews', 'keys', 'claims', 'workers', 'durations', 'artifacts', 'webhooks', 'history', 'retention'] as const satisfies readonly (keyof Store)[];
type SubStore = (typeof SUB_STORES)[number];

/**
 * A Proxy over `target` whose methods count their failures (thrown or
 * rejected) under `prefix` + name and run `after` on success. `special` may
 * answer a property itself. Wrapped methods are made once and kept.
 */
function instrument<T extends object>(
  target: T,
  metrics: RunsetMetrics,
  prefix: string,
  after: Record<string, After>,
  special: (target: T, prop: string, method: Method | undefined) => unknown,
): T {
  const wrapped = new Map<string | symbol, unknown>();
  const failed = (operation: string) => (err: unknown) => {
    metrics.storeErrors.inc({ operation });
    throw err;
  };
  return new Proxy(target, {
    get(obj, prop) {
      const known = wrapped.get(prop);
      if (known !== undefined) return known;
      const value = Reflect.get(obj, prop) as unknown;
      const method = typeof value === 'function' ? (value as Method) : undefined;
      let answer = typeof prop === 'string' ? special(obj, prop, method) : undefined;
      if (answer === undefined && method && typeof prop === 'string') {
        const onError = failed(prefix + prop);
        const record = after[prop];
        answer = (...args: unknown[]) => {
          const askedAt = record ? performance.now() : 0; // read only where something is recorded: sets.peek is the status GET's
          let result: unknown;
          try {
            result = method.apply(obj, args);
          } catch (err) {
            return onError(err);
          }
          if (!(result instanceof Promise)) return result;
          return result.then((value: unknown) => {
            record?.(args, value, askedAt);
            return value;
          }, onError);
        };
      }
      if (answer === undefined) return value;
      wrapped.set(prop, answer);
      return answer;
    },
  });
}

/**
 * fanOut, counting the set.finished events it took once it committed: their
 * sets are read (one read, only when sets ended) for the status they ended with.
 */
function countEndedSets(store: Store, metrics: RunsetMetrics, outbox: WebhookOutbox, fanOut: Method | undefined): Method | undefined {
  if (!fanOut) return undefined;
  return async (...args: unknown[]) => {
    const [route, limit] = args as Parameters<WebhookOutbox['fanOut']>;
    const ended: SetEvent[] = [];
    const taken = await (fanOut.call(outbox, (event: SetEvent) => {
      if (event.event === 'set.finished') ended.push(event);
      return route(event);
    }, limit) as Promise<number>).catch((err: unknown) => {
      metrics.storeErrors.inc({ operation: 'webhooks.fanOut' });
      throw err;
    });
    if (ended.length > 0) {
      // The events are taken whatever this read does: a failure costs these counts, never a delivery.
      const sets = await store.sets.getMany(ended.map((e) => e.setId)).catch(() => {
        metrics.storeErrors.inc({ operation: 'sets.getMany' });
        return [];
      });
      for (const set of sets) {
        metrics.setsEnded.inc({ env: set.env, status: set.status });
        // A set cancelled (or timed out) while queued never started: it waited until it ended.
        const waitedUntil = set.startedAt ?? set.endedAt;
        if (waitedUntil) metrics.setWait.observe({ env: set.env }, Math.max(0, Date.parse(waitedUntil) - Date.parse(set.createdAt)) / 1000);
      }
    }
    return taken;
  };
}
