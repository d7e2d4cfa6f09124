/** API keys: their roles and the record the store keeps (src/store/keys.ts, src/auth/). */

/**
 * What a key may do: read < trigger < admin, each including the one before;
 * worker stands apart: the worker protocol (src/api/routes/worker-protocol.ts)
 * and nothing else (src/auth/policy.ts).
 */
export const KEY_ROLES = Object.freeze(['read', 'trigger', 'admin', 'worker'] as const);
export type KeyRole = (typeof KEY_ROLES)[number];

export function isKeyRole(value: unknown): value is KeyRole {
  return typeof value === 'string' && (KEY_ROLES as readonly string[]).includes(value);
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  role: KeyRole;
  /** The environments whose sets the key may see and create; null: every one. */
  envs: string[] | null;
  /** After this the key is refused as if revoked; null: never. */
  expiresAt: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}
