/**
 * Webhooks: what `webhooks:` in runset.config.yaml declares, and the durable
 * records of what was sent (the outbox in the store).
 */
import type { VariableValue } from './types.js';

export const SET_EVENTS = Object.freeze(['set.started', 'set.finished'] as const);
export type SetEventName = (typeof SET_EVENTS)[number];

/** Where webhook deliveries may go: never link-local or metadata; private receivers are the operator's own choice. */
export const WEBHOOK_OUTBOUND_POLICY = Object.freeze({ allowPrivateTargets: true });

export const WEBHOOK_FORMATS = Object.freeze(['json', 'slack'] as const);
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/**
 * Which ends a webhook is told of: `always` every one; `failure` only a set
 * that ended FAIL; `change` only a set whose result differs from the previous
 * ended set of its environment (or that has none: the first result is news).
 * `failure` and `change` concern ends only: such a webhook takes no `set.started`.
 */
export const WEBHOOK_WHEN = Object.freeze(['always', 'failure', 'change'] as const);
export type WebhookWhen = (typeof WEBHOOK_WHEN)[number];

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
  when: WebhookWhen;
}

/** A set's start or end, written by the store in the transaction that made it. */
export interface SetEvent {
  id: number;
  setId: string;
  env: string;
  event: SetEventName;
  /** The set's status when the event is fanned out (for `set.finished`: its result). */
  status: string;
  /** The result of the newest set of the same environment that ended and was created before this one; null: none. */
  previousStatus: string | null;
  /** The set's `commit` label (src/core/code-hosts.ts reports on it); null when it has none. */
  commit: string | null;
}

/** Whether a webhook takes an event: its events, its environments, and its `when`. The one place this rule lives. */
export function webhookWants(hook: Pick<WebhookConfig, 'events' | 'environments' | 'when'>, event: SetEvent): boolean {
  if (!hook.events.includes(event.event)) return false;
  if (hook.environments !== null && !hook.environments.includes(event.env)) return false;
  if (hook.when === 'always') return true;
  if (event.event !== 'set.finished') return false;
  return hook.when === 'failure' ? event.status === 'FAIL' : event.status !== event.previousStatus;
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
  /** A webhook's body, which every attempt sends: rendered at the first, then kept. (A code host's attempt reports the set afresh: src/webhooks/code-hosts/.) */
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
