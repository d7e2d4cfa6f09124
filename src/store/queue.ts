/**
 * Queues per environment, in SQL both stores share. An environment's
 * `maxConcurrentSets` is copied onto each set it creates (`max_concurrent`);
 * the unfinished sets of an environment, in creation order, hold its places:
 * the first `max_concurrent` of them may run, the rest are queued: WAITING,
 * their members left unclaimed (no new state: docs/architecture.md). A set
 * that ends, however it ends, frees its place for the next.
 *
 * Why this stays true across processes: a set's place only ever moves
 * forward (sets ahead of it end; a set created later is numbered after it,
 * under the store's lock per environment on create), so a set a claim found
 * among the first N stays there until it ends.
 */

/**
 * The ids of the queued sets, as a sub-select: unfinished, with at least
 * `max_concurrent` unfinished sets of its environment ahead of it. `sets` is
 * the sets table, `order` its creation-order column (SQLite's rowid,
 * PostgreSQL's queue_seq). Only the environments with a limit among their
 * unfinished sets are read (the test_run_sets_limited index).
 */
export function queuedSetsSql(sets: string, order: string): string {
  return `SELECT o.id FROM (
          SELECT s.id, s.max_concurrent, row_number() OVER (PARTITION BY s.env ORDER BY s.${order}) AS place
          FROM ${sets} s WHERE s.status IN ('WAITING', 'RUNNING')
            AND s.env IN (${limitedSetsSql(sets, 'l.env')})
        ) o WHERE o.max_concurrent IS NOT NULL AND o.place > o.max_concurrent`;
}

/**
 * `columns` of the unfinished sets with a limit (the test_run_sets_limited
 * index): without one, no set is queued. A claim on SQLite reads this first
 * and leaves queuedSetsSql out when it finds none, as it does almost always:
 * that sub-select (a window over the unfinished sets) cost a claim about 20
 * times the pick itself there (bench/README.md, "The claim loop's CPU").
 */
export function limitedSetsSql(sets: string, columns: string): string {
  return `SELECT ${columns} FROM ${sets} l WHERE l.max_concurrent IS NOT NULL AND l.status IN ('WAITING', 'RUNNING')`;
}

/** Queued sets counted by environment (`env`, `n`): what the metrics' queue gauge shows (WorkersStore.queueStats). */
export function queuedByEnvSql(sets: string, order: string): string {
  return `SELECT env, count(*) AS n FROM ${sets} WHERE id IN (${queuedSetsSql(sets, order)}) GROUP BY env`;
}

/**
 * A queued set's limit, environment and how many unfinished sets of its
 * environment are ahead of it; no row when the set is not unfinished with a
 * limit. `id` is the placeholder of the set's id.
 */
export function queuePlaceSql(sets: string, order: string, id: string): string {
  return `SELECT s.env, s.max_concurrent AS limit_n,
          (SELECT count(*) FROM ${sets} o WHERE o.env = s.env AND o.status IN ('WAITING', 'RUNNING') AND o.${order} < s.${order}) AS before_n
        FROM ${sets} s WHERE s.id = ${id} AND s.status IN ('WAITING', 'RUNNING') AND s.max_concurrent IS NOT NULL`;
}

/** The first `limit` unfinished sets of environment `env` in creation order: those holding its places. */
export function placeHoldersSql(sets: string, order: string, env: string, limit: string): string {
  return `SELECT id FROM ${sets} WHERE env = ${env} AND status IN ('WAITING', 'RUNNING') ORDER BY ${order} LIMIT ${limit}`;
}

/** The row queuePlaceSql reads (counts come back as text from PostgreSQL's bigint). */
export interface QueuePlaceRow {
  env: string;
  limit_n: number;
  before_n: number | string;
}

/**
 * The queue place from what queuePlaceSql read: null when the set is among the
 * first `limit` (it may run), else how many sets must end before it starts.
 */
export function queuePlaceOf(row: QueuePlaceRow | undefined): { env: string; limit: number; ahead: number } | null {
  if (!row) return null;
  const ahead = Number(row.before_n) + 1 - row.limit_n;
  return ahead > 0 ? { env: row.env, limit: row.limit_n, ahead } : null;
}

/**
 * The unfinished sets created before set `id` in its environment with its
 * concurrency group, oldest first: what it supersedes (src/sets/supersede.ts).
 * Creation order is the same lock-guarded order as the queue's.
 */
export function olderInGroupSql(sets: string, order: string, id: string): string {
  return `SELECT o.id FROM ${sets} s JOIN ${sets} o
          ON o.env = s.env AND o.concurrency_group = s.concurrency_group AND o.${order} < s.${order}
        WHERE s.id = ${id} AND o.status IN ('WAITING', 'RUNNING')
        ORDER BY o.${order}`;
}
