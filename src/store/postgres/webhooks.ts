/**
 * The PostgreSQL side of the webhook outbox (see ../webhook-outbox.ts). Events
 * are written by migration 9's trigger in whatever transaction starts or ends a
 * set. Every API process delivers: `FOR UPDATE SKIP LOCKED` hands each event,
 * and each due delivery, to exactly one of them; a lease (on the database's
 * clock) gives a delivery back if its process dies mid-attempt.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { AttemptOutcome, DeliveryWithAttempts, DueDelivery, SetEvent } from '../../core/webhooks.js';
import type { WebhookOutbox } from '../webhook-outbox.js';
import { webhookRowMappers, type AttemptRow, type DeliveryRow } from '../webhook-rows.js';
import { withClient, withTransaction } from './connection.js';
import { msFromNow, NOW, type Names } from './statements.js';

const { toDelivery, withAttempts } = webhookRowMappers<Date>((value) => value.toISOString());
const DELIVERY_COLUMNS = 'id, webhook, set_id, event, state, created_at, next_attempt_at, delivered_at, attempts';

export class PostgresWebhooks implements WebhookOutbox {
  constructor(
    private readonly pool: pg.Pool,
    private readonly n: Names,
  ) {}

  fanOut(route: (event: SetEvent) => readonly string[], limit: number): Promise<number> {
    const n = this.n;
    return withTransaction(this.pool, async (tx) => {
      const { rows: events } = await tx.query<SetEvent & { id: string }>({
        name: 'runset.takeSetEvents',
        text: `
          SELECT e.id, e.set_id AS "setId", s.env, e.event, s.status, s.labels->>'commit' AS "commit",
            (SELECT p.status FROM ${n.sets} AS p
             WHERE p.env = s.env AND p.status IN ('SUCCESS', 'FAIL') AND (p.created_at, p.id) < (s.created_at, s.id)
             ORDER BY p.created_at DESC, p.id DESC LIMIT 1) AS "previousStatus"
          FROM ${n.setEvents} AS e JOIN ${n.sets} AS s ON s.id = e.set_id
          ORDER BY e.id LIMIT $1 FOR UPDATE OF e SKIP LOCKED`,
        values: [limit],
      });
      if (events.length === 0) return 0;
      const deliveries = events.flatMap((event) => route({ ...event, id: Number(event.id) }).map((webhook) => ({ event, webhook })));
      if (deliveries.length > 0) {
        await tx.query({
          name: 'runset.insertDeliveries',
          text: `
            INSERT INTO ${n.deliveries} (id, event_id, webhook, set_id, event, created_at, next_attempt_at)
            SELECT d.id, d.event_id, d.webhook, d.set_id, d.event, ${NOW}, ${NOW}
            FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[]) AS d (id, event_id, webhook, set_id, event)
            ON CONFLICT (event_id, webhook) DO NOTHING`,
          values: [
            deliveries.map(() => randomUUID()),
            deliveries.map((d) => d.event.id),
            deliveries.map((d) => d.webhook),
            deliveries.map((d) => d.event.setId),
            deliveries.map((d) => d.event.event),
          ],
        });
      }
      await tx.query({ name: 'runset.dropSetEvents', text: `DELETE FROM ${n.setEvents} WHERE id = ANY($1::bigint[])`, values: [events.map((e) => e.id)] });
      return events.length;
    });
  }

  async claimDue(limit: number, leaseMs: number): Promise<DueDelivery[]> {
    const n = this.n;
    const { rows } = await withClient(this.pool, (q) =>
      q.query<DeliveryRow<Date> & { body: string | null; lease_token: string; age_ms: number }>({
        name: 'runset.claimDueDeliveries',
        text: `
          UPDATE ${n.deliveries} AS d SET lease_expires_at = ${msFromNow('$2')}, lease_token = gen_random_uuid()::text
          WHERE d.id IN (
            SELECT id FROM ${n.deliveries}
            WHERE state = 'pending' AND next_attempt_at <= now() AND (lease_expires_at IS NULL OR lease_expires_at <= now())
            ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
          RETURNING ${DELIVERY_COLUMNS.split(', ').map((c) => `d.${c}`).join(', ')}, d.body, d.lease_token,
            (extract(epoch FROM now() - d.created_at) * 1000)::float8 AS age_ms`,
        values: [limit, leaseMs],
      }),
    );
    return rows.map((row) => ({ ...toDelivery(row), leaseToken: row.lease_token, ageMs: row.age_ms, body: row.body }));
  }

  async recordAttempt(delivery: Pick<DueDelivery, 'id' | 'leaseToken'>, outcome: AttemptOutcome): Promise<boolean> {
    const n = this.n;
    const state = outcome.delivered ? 'delivered' : outcome.retryInMs === null ? 'failed' : 'pending';
    const { rows } = await withClient(this.pool, (q) =>
      q.query<{ recorded: boolean }>({
        name: 'runset.recordDeliveryAttempt',
        text: `
          WITH recorded AS (
            UPDATE ${n.deliveries} SET attempts = attempts + 1, body = COALESCE(body, $3), lease_expires_at = NULL, lease_token = NULL,
              state = $4, delivered_at = CASE WHEN $4 = 'delivered' THEN ${NOW} END, next_attempt_at = ${msFromNow('$5')}
            WHERE id = $1 AND lease_token = $2
            RETURNING id, attempts
          ), attempt AS (
            INSERT INTO ${n.attempts} (delivery_id, n, at, status_code, error, duration_ms)
            SELECT id, attempts, ${NOW}, $6, $7, $8 FROM recorded
          )
          SELECT EXISTS (SELECT 1 FROM recorded) AS recorded`,
        values: [delivery.id, delivery.leaseToken, outcome.body, state, outcome.retryInMs ?? 0, outcome.statusCode, outcome.error, Math.round(outcome.durationMs)],
      }),
    );
    return rows[0]?.recorded === true;
  }

  async eventsWaiting(setId: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>({ name: 'runset.eventsWaiting', text: `SELECT count(*)::int AS n FROM ${this.n.setEvents} WHERE set_id = $1`, values: [setId] });
    return rows[0]!.n;
  }

  async listDeliveries(setId: string): Promise<DeliveryWithAttempts[]> {
    const n = this.n;
    const [deliveries, attempts] = await withClient(this.pool, async (q) => [
      (await q.query<DeliveryRow<Date>>({ name: 'runset.listDeliveries', text: `SELECT ${DELIVERY_COLUMNS} FROM ${n.deliveries} WHERE set_id = $1 ORDER BY created_at, webhook`, values: [setId] })).rows,
      (
        await q.query<AttemptRow<Date>>({
          name: 'runset.listDeliveryAttempts',
          text: `SELECT a.delivery_id, a.n, a.at, a.status_code, a.error, a.duration_ms FROM ${n.attempts} AS a JOIN ${n.deliveries} AS d ON d.id = a.delivery_id WHERE d.set_id = $1`,
          values: [setId],
        })
      ).rows,
    ] as const);
    return withAttempts(deliveries, attempts);
  }
}
