/**
 * runset's Prometheus metrics (prom-client), one registry per process. Loaded
 * only when a process serves metrics (--metrics-port): without it, nothing here
 * runs and no hook is installed anywhere.
 *
 * Three kinds of figures:
 * - this process's events, counted where they happen: HTTP requests, sets
 *   created, members run, claims, store errors (see ./store.ts, ./http.ts);
 * - this process's state, read at scrape time: its worker slots;
 * - the whole store's state, read at scrape time in one cheap query
 *   (WorkersStore.queueStats): members waiting, webhook deliveries pending, live
 *   workers, sets queued by environment. Every process shows the same values: aggregate them with max().
 */
import { performance } from 'node:perf_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ClaimedRun, RunOutcome } from '../core/types.js';
import type { QueueStats, Store } from '../store/store.js';
import type { WorkerMetrics } from '../scheduler/worker-metrics.js';

/** Seconds, from a status GET (a millisecond) to a slow create. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Seconds, from an HTTP check to a long Playwright case. */
const MEMBER_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];
/** Seconds a set waits before its first member starts: a free fleet's dispatch to a long queue. */
const SET_WAIT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
/** Seconds, from a store round trip to a Playwright process starting its first test. */
const CLAIM_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class RunsetMetrics implements WorkerMetrics {
  readonly registry = new Registry();
  readonly httpRequests: Histogram<'method' | 'route' | 'status_code'>;
  readonly setsCreated: Counter<'env'>;
  readonly setsEnded: Counter<'env' | 'status'>;
  readonly storeErrors: Counter<'operation'>;
  readonly leasesLost: Counter<'outcome'>;
  readonly setWait: Histogram<'env'>;
  private readonly members: Counter<'type' | 'outcome'>;
  private readonly memberDuration: Histogram<'type'>;
  private readonly claimToStart: Histogram<'type'>;
  /** When the claim that handed out each member was asked for (performance.now()); forgotten with the member. */
  private readonly claimedAt = new WeakMap<ClaimedRun, number>();

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Histogram({
      name: 'runset_http_request_duration_seconds',
      help: 'API requests by method, route template (never the raw URL; "unmatched" for no route) and status code, and how long each took',
      labelNames: ['method', 'route', 'status_code'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.setsCreated = new Counter({ name: 'runset_sets_created_total', help: 'Test Run Sets created by this process, by environment', labelNames: ['env'], registers });
    this.setsEnded = new Counter({
      name: 'runset_sets_ended_total',
      help: 'Test Run Sets ended (SUCCESS or FAIL), by environment and status; each set is counted once across API processes, by the one that fans out its webhook event',
      labelNames: ['env', 'status'],
      registers,
    });
    this.setWait = new Histogram({
      name: 'runset_set_wait_seconds',
      help: 'From a set\'s creation to its first member\'s start (to its end when it ended without starting), by environment: its time queued plus its dispatch; observed once across the fleet when the set ends',
      labelNames: ['env'],
      buckets: SET_WAIT_BUCKETS,
      registers,
    });
    this.members = new Counter({ name: 'runset_members_total', help: 'Members whose outcome this process wrote, by test type and outcome (SUCCESS, FAIL)', labelNames: ['type', 'outcome'], registers });
    this.memberDuration = new Histogram({ name: 'runset_member_duration_seconds', help: 'How long members ran here (all attempts), by test type', labelNames: ['type'], buckets: MEMBER_BUCKETS, registers });
    this.claimToStart = new Histogram({
      name: 'runset_claim_to_start_seconds',
      help: 'From the claim that took a member to its start here (a batch member: its test beginning), by test type',
      labelNames: ['type'],
      buckets: CLAIM_BUCKETS,
      registers,
    });
    this.leasesLost = new Counter({
      name: 'runset_leases_lost_total',
      help: 'Expired leases this process reaped: the member went back to WAITING (requeued) or, out of attempts, ended FAIL (failed)',
      labelNames: ['outcome'],
      registers,
    });
    // Both series from the start, so that rate() and increase() see the first loss.
    for (const outcome of ['requeued', 'failed']) this.leasesLost.inc({ outcome }, 0);
    this.storeErrors = new Counter({ name: 'runset_store_errors_total', help: 'Store operations that failed, by operation', labelNames: ['operation'], registers });
  }

  /** Members a claim handed out, asked for at `askedAt` (performance.now()). */
  claimed(runs: readonly ClaimedRun[], askedAt: number): void {
    for (const run of runs) this.claimedAt.set(run, askedAt);
  }

  memberStarted(run: ClaimedRun): void {
    const askedAt = this.claimedAt.get(run);
    if (askedAt === undefined) return;
    this.claimedAt.delete(run);
    this.claimToStart.observe({ type: run.spec.type }, (performance.now() - askedAt) / 1000);
  }

  memberEnded(run: ClaimedRun, outcome: RunOutcome): void {
    this.members.inc({ type: run.spec.type, outcome: outcome.status });
    this.memberDuration.observe({ type: run.spec.type }, outcome.durationMs / 1000);
  }

  /** This process's worker slots: `total`, and how many `busy()` says are in use at scrape time. */
  watchSlots(total: number, busy: () => number): void {
    const registers = [this.registry];
    new Gauge({ name: 'runset_worker_slots', help: 'Worker slots in this process', registers }).set(total);
    new Gauge({
      name: 'runset_worker_slots_busy',
      help: 'Worker slots of this process running a member now (a batch counts its parallelism)',
      registers,
      collect() {
        this.set(busy());
      },
    });
  }

  /**
   * The whole store's queue, webhook backlog and live workers, read once per
   * scrape however many gauges ask. A failed read shows NaN (unknown), not the
   * last value, and counts as a store error.
   */
  watchStore(store: Store, workerStaleMs: number): void {
    let reading: Promise<QueueStats | undefined> | undefined;
    const read = () =>
      (reading ??= store
        .workers.queueStats(workerStaleMs)
        .catch(() => undefined)
        .finally(() => {
          reading = undefined;
        }));
    const gauge = (name: string, help: string, pick: (s: QueueStats) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          const stats = await read();
          this.set(stats ? pick(stats) : Number.NaN);
        },
      });
    gauge('runset_members_waiting', 'Members WAITING in unfinished sets across the store (the queue); the same on every process', (s) => s.waitingMembers);
    gauge('runset_members_running', 'Members RUNNING in unfinished sets across the store (begun, not ended); the same on every process', (s) => s.runningMembers);
    gauge('runset_webhook_deliveries_pending', 'Webhook deliveries not yet delivered nor given up, across the store', (s) => s.pendingDeliveries);
    new Gauge({
      name: 'runset_sets_queued',
      help: 'Sets queued past their environment\'s maxConcurrentSets, by environment (environments with none show no series); the same on every process',
      labelNames: ['env'],
      registers: [this.registry],
      async collect() {
        const stats = await read();
        this.reset();
        for (const [env, n] of Object.entries(stats?.queuedSets ?? {})) this.set({ env }, n);
      },
    });
    gauge('runset_workers_live', 'Worker processes that heartbeat recently, across the store', (s) => s.liveWorkers);
  }

  /** The text a scrape gets, and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
