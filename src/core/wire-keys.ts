/**
 * Wire shapes of key management (GET/POST/DELETE /api/v0/keys), as TypeBox
 * schemas: validation, serialisation, the OpenAPI document and the dashboard's
 * Keys page all come from them. A token appears only in the create answer.
 */
import type { Static } from 'typebox';
import { Type } from './typebox.js';
import { DateTime, LIMITS, NullableDateTime, refTo, Uuid } from './wire.js';
import { KEY_ROLES } from './keys.js';

/** What a key's name may be (the CLI says the same). */
export const KEY_NAME_PATTERN = '^[\\w .@-]{1,100}$';

export const KeyRoleSchema = Type.Unsafe<(typeof KEY_ROLES)[number]>({
  type: 'string',
  enum: [...KEY_ROLES],
  description: 'read: read only; trigger: also create, run again and cancel sets; admin: also manage keys (and use the worker protocol); worker: the worker protocol only (runner machines and CI jobs that run members).',
});

export const KeyEnvsSchema = Type.Unsafe<string[] | null>({ type: ['array', 'null'], items: { type: 'string' }, description: 'Environments it is limited to; null: every one.' });

const EnvNames = Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.envNameLength }), { minItems: 1, maxItems: 100, uniqueItems: true });

export const KeyView = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    role: KeyRoleSchema,
    envs: KeyEnvsSchema,
    expiresAt: NullableDateTime,
    createdAt: DateTime,
    lastUsedAt: NullableDateTime,
    revokedAt: NullableDateTime,
  },
  { additionalProperties: false, $id: 'ApiKey' },
);
export type KeyView = Static<typeof KeyView>;

export const KeyList = Type.Object({ keys: Type.Array(refTo(KeyView)) }, { additionalProperties: false, $id: 'ApiKeyList' });
export type KeyList = Static<typeof KeyList>;

export const CreateKeyBody = Type.Object(
  {
    name: Type.String({ pattern: KEY_NAME_PATTERN, description: 'What the key is for: 1-100 letters, digits, spaces or . _ @ -' }),
    role: Type.Optional(KeyRoleSchema),
    envs: Type.Optional(EnvNames),
    expires: Type.Optional(Type.String({ minLength: 1, maxLength: 32, description: 'Lifetime from now, e.g. 90d, 12h; default: never expires.' })),
  },
  { additionalProperties: false, $id: 'CreateKeyBody' },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;

export const CreatedKey = Type.Object(
  {
    key: refTo(KeyView),
    token: Type.String({ description: 'The secret (rs_…). Shown this once: only its SHA-256 is stored.' }),
  },
  { additionalProperties: false, $id: 'CreatedKey' },
);
export type CreatedKey = Static<typeof CreatedKey>;
