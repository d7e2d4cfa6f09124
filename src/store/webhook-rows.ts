/**
 * Rows of the webhook tables as both stores read them, and their records.
 * `T` is how a store hands back timestamps (SQLite: ISO strings, PostgreSQL: Dates).
 */
import type { DeliveryState, DeliveryWithAttempts, SetEventName, WebhookAttempt, WebhookDelivery } from '../core/webhooks.js';

export interface DeliveryRow<T> {
  id: string;
  webhook: string;
  set_id: string;
  event: string;
  state: string;
  created_at: T;
  /** SQLite: ms since the epoch; PostgreSQL: a Date. */
  next_attempt_at: number | Date;
  delivered_at: T | null;
  attempts: number;
}

export interface AttemptRow<T> {
  delivery_id: string;
  n: number;
  at: T;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export function webhookRowMappers<T>(iso: (value: T) => string) {
  const toDelivery = (row: DeliveryRow<T>): WebhookDelivery => ({
    id: row.id,
    webhook: row.webhook,
    setId: row.set_id,
    event: row.event as SetEventName,
    state: row.state as DeliveryState,
    createdAt: iso(row.created_at),
    nextAttemptAt: row.state === 'pending' ? new Date(row.next_attempt_at).toISOString() : null,
    deliveredAt: row.delivered_at === null ? null : iso(row.delivered_at),
    attempts: row.attempts,
  });
  const toAttempt = (row: AttemptRow<T>): WebhookAttempt => ({
    n: row.n,
    at: iso(row.at),
    statusCode: row.status_code,
    error: row.error,
    durationMs: row.duration_ms,
  });
  /** Deliveries with their attempts (`attempts` in any order). */
  const withAttempts = (deliveries: readonly DeliveryRow<T>[], attempts: readonly AttemptRow<T>[]): DeliveryWithAttempts[] =>
    deliveries.map((row) => ({
      ...toDelivery(row),
      history: attempts
        .filter((a) => a.delivery_id === row.id)
        .sort((a, b) => a.n - b.n)
        .map(toAttempt),
    }));
  return { toDelivery, withAttempts };
}
