/** The PostgreSQL side of Store.queueStats: one statement, each figure served by an index (see migrations.ts). */
import type { QueueStats } from '../store.js';
import type { Queryable } from './connection.js';
import type { Names } from './sql.js';

export async function queueStats(q: Queryable, n: Names, staleMs: number): Promise<QueueStats> {
  const { rows } = await q.query<QueueStats>({
    name: 'runset.queueStats',
    // Unfinished sets through test_run_sets_status_recent, their counts rather than a COUNT over members.
    text: `
      SELECT
        (SELECT COALESCE(sum(count_waiting), 0)::integer FROM ${n.sets} WHERE status IN ('WAITING', 'RUNNING')) AS "waitingMembers",
        (SELECT count(*)::integer FROM ${n.deliveries} WHERE state = 'pending') AS "pendingDeliveries",
        (SELECT count(*)::integer FROM ${n.workers} WHERE heartbeat_at >= now() - make_interval(secs => $1::double precision / 1000)) AS "liveWorkers"`,
    values: [staleMs],
  });
  return rows[0] as QueueStats;
}
