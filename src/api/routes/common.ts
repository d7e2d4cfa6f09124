/**
 * Schema pieces every /v0 route file shares: ids in the path, the problem
 * responses, and the credentials the /v0 hook accepts (src/api/auth.ts).
 */
import { Type } from 'typebox';

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** `{ id }` in the path, a uuid; anything else answers 400 invalid_id. */
export function uuidParams(description: string) {
  return Type.Object({ id: Type.String({ pattern: UUID_PATTERN, description }) });
}

export const SetIdParams = uuidParams('Test Run Set id (uuid).');

/** The problem+json responses a route documents, by status. */
export function problems(...statuses: number[]): Record<number, { $ref: string; description: string }> {
  return Object.fromEntries(statuses.map((s) => [s, { $ref: 'Problem#', description: 'application/problem+json' }]));
}

/** Either credential works: a Bearer key, or the dashboard's session cookie (with X-CSRF-Token on writes). */
export const SECURED: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { sessionCookie: [] }];
