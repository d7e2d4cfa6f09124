/**
 * The PostgreSQL store's SQL for cancel and fail fast (the rules of ./statements.ts
 * hold: schema-qualified, prepared by name). A cancel is two statements in one
 * transaction: the members' moves with their set's counts (setRollUpCtes, ../sql/set-rollup.ts,
 * as every move), then the set's record of who cancelled it and the NOTIFY that
 * tells every worker — delivered only if the transaction commits.
 */
import type { SetControl } from '../../core/types.js';
import { controlOf, type ControlRow } from '../rows.js';
import type { CancelRequest } from '../sets.js';
import type { Queryable } from './connection.js';
import { failsSetSql, setRollUpCtes } from '../sql/set-rollup.js';
import { POSTGRES } from '../sql/dialect.js';
import { cancelMember } from '../sql/member-moves.js';
import { NOW, type Names } from './statements.js';

/** The payload prefix on the wake-up channel that says "this set was cancelled". */
export const CANCEL_PAYLOAD = 'cancel:';

/**
 * Ends every unfinished member FAIL with the error (a leased one loses its
 * lease, so its holder's writes are fenced out); returns whether the set exists
 * and how many members ended.
 */
export async function cancelMembers(q: Queryable, n: Names, setId: string, error: string): Promise<{ found: boolean; ended: number }> {
  const { rows } = await q.query<{ found: boolean; ended: number }>({
    name: 'runset.cancelMembers',
    text: `
      WITH unfinished AS (
        SELECT id, status FROM ${n.runs} WHERE set_id = $1 AND status IN ('WAITING', 'RUNNING') ORDER BY id FOR UPDATE
      ), ended AS (
        UPDATE ${n.runs} AS r SET ${cancelMember(POSTGRES, { error: '$2' })}
        FROM unfinished AS u WHERE r.id = u.id
        RETURNING r.set_id, u.status AS previous, r.status AS next, ${failsSetSql('cancel', 'r', 'r.status', 'r.attempts')} AS fails
      ), moved AS (
        SELECT set_id, previous, next, fails FROM ended
      ), ${setRollUpCtes(POSTGRES, n.sets)}
      SELECT EXISTS (SELECT 1 FROM ${n.sets} WHERE id = $1) AS found, (SELECT count(*) FROM ended)::integer AS ended`,
    values: [setId, error],
  });
  return rows[0] as { found: boolean; ended: number };
}

/** Records who cancelled the set and tells every process (on commit). */
export async function markCancelled(q: Queryable, n: Names, setId: string, req: CancelRequest): Promise<void> {
  await q.query({
    name: 'runset.markCancelled',
    text: `
      UPDATE ${n.sets} SET cancelled_at = ${NOW}, cancelled_by = $2, cancelled_by_name = $3, cancel_error = $4
      WHERE id = $1 AND cancelled_at IS NULL`,
    values: [setId, req.byKeyId, req.byKeyName, req.error],
  });
  await q.query({ name: 'runset.notifyCancelled', text: 'SELECT pg_notify($1, $2)', values: [n.channel, `${CANCEL_PAYLOAD}${setId}`] });
}

export async function setControl(q: Queryable, n: Names, setId: string): Promise<SetControl | null> {
  const { rows } = await q.query<ControlRow<Date>>({
    name: 'runset.setControl',
    text: `SELECT max_failures, cancelled_at, cancelled_by, cancelled_by_name, cancel_error FROM ${n.sets} WHERE id = $1`,
    values: [setId],
  });
  return rows[0] ? controlOf(rows[0], (at) => at.toISOString()) : null;
}
