/**
 * Webhooks: what `webhooks:` in runset.config.yaml declares, and the durable
 * records of what was sent (the outbox in the store).
 */
import type { VariableValue } from './types.js';

export const SET_EVENTS = Object.freeze(['set.started', 'set.finished'] as const);
export type SetEventName = (typeof SET_EVENTS)[number];

export const WEBHOOK_FORMATS = Object.freeze(['json', 'slack'] as const);
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export interface WebhookConfig {
  /** Names the webhook in deliveries; unique in the file (default `webhook-<position>`). */
  name: string;
  /** Plain, or `${env:NAME}` when the address itself is a secret (a Slack incoming-webhook URL). */
  url: VariableValue;
  /** `${env:NAME}`: the HMAC key. Never in clear in the file. Null: unsigned (only allowed for `format: slack`). */
  secret: { kind: 'env'; name: string } | null;
  events: readonly SetEventName[];
  /** Only sets of these environments; null: every environment. */
  environments: readonly string[] | null;
  format: WebhookFormat;
}

/** A set's start or end, written by the store in the transaction that made it. */
export interface SetEvent {
  id: number;
  setId: string;
  env: string;
  event: SetEventName;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed';

export interface WebhookDelivery {
  id: string;
  webhook: string;
  setId: string;
  event: SetEventName;
  state: DeliveryState;
  createdAt: string;
  /** When the next attempt is due (pending only). */
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  attempts: number;
}

/** A delivery leased to this process for one attempt. */
export interface DueDelivery extends WebhookDelivery {
  /** Fences the attempt's record: a lease that expired and was taken again is not written twice. */
  leaseToken: string;
  /** Time since the delivery was created, by the store's clock (the 24 h retry window). */
  ageMs: number;
  /** The body every attempt sends: rendered at the first, then kept. */
  body: string | null;
}

export interface WebhookAttempt {
  n: number;
  at: string;
  /** The receiver's HTTP status; null when no answer came (refused, timed out). */
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface AttemptOutcome extends Omit<WebhookAttempt, 'n' | 'at'> {
  delivered: boolean;
  /** When not delivered: wait this long before the next attempt; null gives up (state `failed`). */
  retryInMs: number | null;
  body: string;
}

export interface DeliveryWithAttempts extends WebhookDelivery {
  history: WebhookAttempt[];
}
