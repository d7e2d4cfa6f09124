/**
 * Which members a claim takes, written once for both stores over their
 * Dialect: the unleased WAITING members, oldest first (the members' creation
 * order: ./dialect.ts memberOrder), never of a set queued behind its
 * environment's limit (../queue.ts). PostgreSQL skips the rows another claimer
 * has locked; SQLite's one writer holds the whole file, so nothing else is
 * picking. What a claim then writes on each picked member is ./member-moves.ts's.
 */
import { queuedSetsSql } from '../queue.js';
import type { Dialect } from './dialect.js';

/** A store's members and sets tables, as its SQL names them. */
export interface Tables {
  runs: string;
  sets: string;
}

/**
 * Narrowing a claim (ClaimRequest): batch keys to leave out (`skip`, a list),
 * one set (`set`, or NULL for any) and some environments (`envs`, a list, or
 * NULL for every one). Each is a placeholder.
 */
export interface PickFilter {
  skip: string;
  set: string;
  envs: string;
}

/**
 * Up to `limit` unleased WAITING members (`id`, `set_id`, and `seq`, their
 * creation order), oldest first; with `filter`, only those it lets through.
 * `limit` is a placeholder. `queues: false` leaves the queued sets'
 * exclusion out: only for a pick made where no unfinished set has a limit
 * (limitedSetsSql found none in the same transaction), so none is queued.
 */
export function pickWaitingSql(d: Dialect, t: Tables, limit: string, filter?: PickFilter, queues = true): string {
  const narrowed = filter === undefined ? '' : `
          AND (batch_key IS NULL OR NOT (${d.inList('batch_key', filter.skip)}))
          AND (${d.text(filter.set)} IS NULL OR set_id = ${d.text(filter.set)}) AND (${d.list(filter.envs)} IS NULL OR ${d.inList('env', filter.envs)})`;
  const unqueued = queues ? `
          AND set_id NOT IN (${queuedSetsSql(t.sets, d.setOrder)})` : '';
  return `
        SELECT id, set_id, ${d.memberOrder} AS seq FROM ${t.runs} WHERE status = 'WAITING' AND worker_id IS NULL${narrowed}${unqueued}
        ORDER BY ${d.memberOrder} LIMIT ${limit}${d.lockSkipping}`;
}

/**
 * `columns` of up to `limit` unleased WAITING members of one set with one batch
 * key (the rest of a batch: ClaimsStore.claimBatch takes them, waitingWork
 * reads their expected durations), oldest first, on the test_runs_batch index.
 * `lock`: skip and lock rows as a claim does (a read alone takes no lock).
 */
export function pickBatchSql(d: Dialect, t: Tables, columns: string, p: { set: string; batchKey: string; limit: string; lock: boolean }): string {
  return `
        SELECT ${columns} FROM ${t.runs}
        WHERE set_id = ${p.set} AND batch_key = ${p.batchKey} AND status = 'WAITING' AND worker_id IS NULL
        ORDER BY ${d.memberOrder} LIMIT ${p.limit}${p.lock ? d.lockSkipping : ''}`;
}
