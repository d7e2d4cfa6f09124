/**
 * The SQLite side of the webhook outbox (see ../webhook-outbox.ts). Set events
 * are written by the triggers of migration 9; one process owns the file, so a
 * lease here only guards against a second attempt from a loop in this process,
 * and the owner expires every lease when it opens the file (whoever held them died).
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { AttemptOutcome, DeliveryWithAttempts, DueDelivery, SetEvent } from '../../core/webhooks.js';
import type { WebhookOutbox } from '../webhook-outbox.js';
import { webhookRowMappers, type AttemptRow, type DeliveryRow } from '../webhook-rows.js';
import { settle } from './settle.js';
import { now } from './statements.js';

const { toDelivery, withAttempts } = webhookRowMappers<string>((value) => value);
const DELIVERY_COLUMNS = 'id, webhook, set_id, event, state, created_at, next_attempt_at, delivered_at, attempts';

type Statement = 'events' | 'waiting' | 'dropEvents' | 'insertDelivery' | 'due' | 'lease' | 'record' | 'attempt' | 'deliveries' | 'attempts';

export class SqliteWebhooks implements WebhookOutbox {
  private readonly sql: Record<Statement, Database.Statement>;

  constructor(
    private readonly db: Database.Database,
    owner: boolean,
  ) {
    if (owner) db.prepare('UPDATE webhook_deliveries SET lease_expires_at = NULL, lease_token = NULL WHERE lease_expires_at IS NOT NULL').run();
    this.sql = {
      // previousStatus: the newest earlier set of the environment that ended (ties on created_at broken by id, as ids grow with time).
      events: db.prepare(`
        SELECT e.id, e.set_id AS setId, s.env, e.event, s.status, json_extract(s.labels, '$.commit') AS 'commit',
          (SELECT p.status FROM test_run_sets AS p
           WHERE p.env = s.env AND p.status IN ('SUCCESS', 'FAIL') AND (p.created_at < s.created_at OR (p.created_at = s.created_at AND p.id < s.id))
           ORDER BY p.created_at DESC, p.id DESC LIMIT 1) AS previousStatus
        FROM set_events AS e JOIN test_run_sets AS s ON s.id = e.set_id ORDER BY e.id LIMIT ?`),
      waiting: db.prepare('SELECT count(*) AS n FROM set_events WHERE set_id = ?'),
      dropEvents: db.prepare('DELETE FROM set_events WHERE id <= ?'),
      insertDelivery: db.prepare(`
        INSERT INTO webhook_deliveries (id, event_id, webhook, set_id, event, created_at, next_attempt_at)
        VALUES (@id, @eventId, @webhook, @setId, @event, @at, @due) ON CONFLICT (event_id, webhook) DO NOTHING`),
      due: db.prepare(`
        SELECT ${DELIVERY_COLUMNS}, body FROM webhook_deliveries
        WHERE state = 'pending' AND next_attempt_at <= @now AND (lease_expires_at IS NULL OR lease_expires_at <= @now)
        ORDER BY next_attempt_at LIMIT @limit`),
      lease: db.prepare('UPDATE webhook_deliveries SET lease_expires_at = @until, lease_token = @token WHERE id = @id'),
      record: db.prepare(`
        UPDATE webhook_deliveries SET attempts = attempts + 1, body = COALESCE(body, @body), lease_expires_at = NULL, lease_token = NULL,
          state = @state, delivered_at = @deliveredAt, next_attempt_at = @due
        WHERE id = @id AND lease_token = @token RETURNING attempts`),
      attempt: db.prepare(`
        INSERT INTO webhook_attempts (delivery_id, n, at, status_code, error, duration_ms) VALUES (@id, @n, @at, @statusCode, @error, @durationMs)`),
      deliveries: db.prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE set_id = ? ORDER BY created_at, webhook`),
      attempts: db.prepare(`
        SELECT a.delivery_id, a.n, a.at, a.status_code, a.error, a.duration_ms
        FROM webhook_attempts AS a JOIN webhook_deliveries AS d ON d.id = a.delivery_id WHERE d.set_id = ?`),
    };
  }

  fanOut(route: (event: SetEvent) => readonly string[], limit: number): Promise<number> {
    return settle(() =>
      this.db.transaction(() => {
        const events = this.sql.events.all(limit) as SetEvent[];
        const at = now();
        const due = Date.now();
        for (const event of events) {
          for (const webhook of route(event)) this.sql.insertDelivery.run({ id: randomUUID(), eventId: event.id, webhook, setId: event.setId, event: event.event, at, due });
        }
        const last = events.at(-1);
        if (last) this.sql.dropEvents.run(last.id);
        return events.length;
      }).immediate(),
    );
  }

  claimDue(limit: number, leaseMs: number): Promise<DueDelivery[]> {
    return settle(() =>
      this.db.transaction(() => {
        const at = Date.now();
        const rows = this.sql.due.all({ now: at, limit }) as Array<DeliveryRow<string> & { body: string | null }>;
        return rows.map((row) => {
          const leaseToken = randomUUID();
          this.sql.lease.run({ id: row.id, until: at + leaseMs, token: leaseToken });
          return { ...toDelivery(row), leaseToken, ageMs: at - Date.parse(row.created_at), body: row.body };
        });
      }).immediate(),
    );
  }

  recordAttempt(delivery: Pick<DueDelivery, 'id' | 'leaseToken'>, outcome: AttemptOutcome): Promise<boolean> {
    return settle(() =>
      this.db.transaction(() => {
        const at = now();
        const state = outcome.delivered ? 'delivered' : outcome.retryInMs === null ? 'failed' : 'pending';
        const row = this.sql.record.get({
          id: delivery.id,
          token: delivery.leaseToken,
          body: outcome.body,
          state,
          deliveredAt: outcome.delivered ? at : null,
          due: Date.now() + (outcome.retryInMs ?? 0),
        }) as { attempts: number } | undefined;
        if (!row) return false;
        this.sql.attempt.run({ id: delivery.id, n: row.attempts, at, statusCode: outcome.statusCode, error: outcome.error, durationMs: outcome.durationMs });
        return true;
      }).immediate(),
    );
  }

  eventsWaiting(setId: string): Promise<number> {
    return settle(() => (this.sql.waiting.get(setId) as { n: number }).n);
  }

  listDeliveries(setId: string): Promise<DeliveryWithAttempts[]> {
    return settle(() => withAttempts(this.sql.deliveries.all(setId) as DeliveryRow<string>[], this.sql.attempts.all(setId) as AttemptRow<string>[]));
  }
}
