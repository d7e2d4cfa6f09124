/**
 * Wire shape of `GET /api/v0/webhook-deliveries?setId=`: each delivery of a
 * set's events to a configured webhook, with every attempt.
 */
import type { Static } from 'typebox';
import { Type } from './typebox.js';
import { DateTime, NullableDateTime, refTo, Uuid } from './wire.js';
import { UUID_PATTERN } from './uuid.js';

export const WebhookAttemptView = Type.Object(
  {
    n: Type.Integer({ minimum: 1, description: 'The attempt number, from 1.' }),
    at: DateTime,
    statusCode: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status; null when no answer came." }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the attempt failed (one line, never the URL); null when it was delivered.' }),
    durationMs: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false, $id: 'WebhookAttempt' },
);

export const WebhookDeliveryView = Type.Object(
  {
    id: Type.String({ description: 'Sent as the Runset-Delivery header: receivers deduplicate on it.' }),
    webhook: Type.String({ description: 'The webhook\'s name in runset.config.yaml, or the code host reported to: `github:check-run` or `gitlab:commit-status`.' }),
    setId: Uuid,
    event: Type.Union([Type.Literal('set.started'), Type.Literal('set.finished')]),
    state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
      description: 'pending: not delivered yet (retried with backoff for 24 h); delivered: a 2xx answer; failed: given up.',
    }),
    createdAt: DateTime,
    nextAttemptAt: { ...NullableDateTime, description: 'When a pending delivery is tried next.' },
    deliveredAt: NullableDateTime,
    attempts: Type.Array(refTo(WebhookAttemptView)),
  },
  { additionalProperties: false, $id: 'WebhookDelivery' },
);

export const WebhookDeliveryList = Type.Object(
  {
    deliveries: Type.Array(refTo(WebhookDeliveryView)),
    eventsWaiting: Type.Integer({
      minimum: 0,
      description: "The set's starts and ends not yet turned into deliveries (within about a second of the change): while above 0, more deliveries are to come.",
    }),
  },
  { additionalProperties: false, $id: 'WebhookDeliveryList' },
);
export type WebhookDeliveryList = Static<typeof WebhookDeliveryList>;

export const WebhookDeliveriesQuery = Type.Object(
  { setId: Type.String({ format: 'uuid', pattern: UUID_PATTERN, description: 'The Test Run Set (uuid).' }) },
  { additionalProperties: false },
);
