/**
 * The workers sub-store: the registry of live worker processes (who is alive,
 * for sizing shares and for GET /api/v0/workers) and the store-wide figures a
 * metrics scrape reads.
 */

/** A worker process, as it registers itself. */
export interface NewWorker {
  id: string;
  host: string;
  pid: number;
  slots: number;
  /**
   * The key that registered it over HTTP (the worker protocol); null or absent:
   * a worker of this store's own (in-process, or direct on PostgreSQL). Only
   * the same key may heartbeat, re-register or remove it.
   */
  keyId?: string | null;
}

/** A live worker as a share of a batch sees it: where it runs, its slots, and the batch's members it holds (how many, their expected ms). */
export interface BatchWorker {
  id: string;
  host: string;
  slots: number;
  holding: number;
  heldMs: number;
}

/** A live worker process and what it does now (GET /api/v0/workers, `runset workers`). */
export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
  slots: number;
  startedAt: string;
  heartbeatAt: string;
  /** Members it has begun and not yet ended, oldest start first. */
  running: RunningMember[];
  /** Members leased to it that it has not begun: the rest of its share, a slot's next. */
  held: number;
}

export interface RunningMember {
  setId: string;
  runId: string;
  name: string;
  type: string;
  startedAt: string | null;
}

/** Store-wide figures a metrics scrape reads, each from an index or the sets' own counts (WorkersStore.queueStats). */
export interface QueueStats {
  /** Members WAITING in unfinished sets, as their sets count them (reserved ones included). */
  waitingMembers: number;
  /** Members RUNNING in unfinished sets (begun, not ended): work a scale-down would cut short. */
  runningMembers: number;
  /** Webhook deliveries not yet delivered nor given up. */
  pendingDeliveries: number;
  /** Worker processes that heartbeat within the staleness window. */
  liveWorkers: number;
  /** Sets queued past their environment's maxConcurrentSets, by environment; environments with none are left out. */
  queuedSets: Record<string, number>;
}

export interface WorkersStore {
  /** Records a worker process as alive now (again, if it was dropped); false, and nothing written, when the id is another key's worker. */
  register(worker: NewWorker): Promise<boolean>;
  /** Marks it alive now; false when its row is gone (it was dropped as stale) or is another key's: register again. */
  heartbeat(id: string, keyId?: string | null): Promise<boolean>;
  /** Removes it when it is this key's (keyId null or absent: a worker of the store's own). */
  remove(id: string, keyId?: string | null): Promise<void>;
  /**
   * The workers that heartbeat within `staleMs` (judged by the store's clock),
   * each with how many members of one batch it holds; stale rows are dropped.
   */
  batchWorkers(setId: string, batchKey: string, staleMs: number): Promise<BatchWorker[]>;
  /** The workers that heartbeat within `staleMs`, by host then start, with the members each holds. Reads only. */
  list(staleMs: number): Promise<WorkerInfo[]>;
  /** What a metrics scrape shows of the whole store: the queue, the webhook backlog, live workers (within `staleMs`). Reads only. */
  queueStats(staleMs: number): Promise<QueueStats>;
}
