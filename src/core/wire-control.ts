/**
 * Wire shapes of ending a set early (cancel, fail fast), as TypeBox schemas.
 * None changes a seed shape: the cancel answer is the seed status plus one field.
 */
import type { Static } from 'typebox';
import { Type } from './typebox.js';
import { DateTime, TestRunSetStatus } from './wire.js';

export const CancellationView = Type.Object(
  {
    at: DateTime,
    byKeyId: Type.Union([Type.String(), Type.Null()], { description: 'The key that cancelled the set; null when fail fast (maxFailures) did.' }),
    byKeyName: Type.Union([Type.String(), Type.Null()]),
    error: Type.String({ description: 'The error its cancelled members got: "cancelled", or "cancelled: maxFailures N reached".' }),
  },
  { additionalProperties: false, $id: 'Cancellation' },
);
export type CancellationView = Static<typeof CancellationView>;

export const CancelTestRunSetResult = Type.Object(
  {
    ...TestRunSetStatus.properties,
    cancelled: Type.Boolean({ description: 'true: this request ended the set; false: it had already ended, and nothing changed.' }),
  },
  { additionalProperties: false, $id: 'CancelTestRunSetResult' },
);
export type CancelTestRunSetResult = Static<typeof CancelTestRunSetResult>;
