/**
 * Where the policy (src/auth/policy.ts) meets the routes: each /v0 route's
 * required role is looked up once, when the route is registered, from its
 * operationId; each request is then one comparison. A route with no rule stops
 * the API from starting, so a new route cannot go out open by omission.
 */
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { problemOf, RunsetError } from '../core/errors.js';
import type { ApiKeyRecord, KeyRole } from '../core/keys.js';
import { hasRole, operationRefusal, requiredRole, seesEnv } from '../auth/policy.js';
import { sendProblem } from './problems.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The least role that may call the route (set from the policy when it is registered). */
    requiredRole?: KeyRole;
  }
}

function operationIdOf(route: Pick<RouteOptions, 'schema'>): string | undefined {
  const id = (route.schema as { operationId?: unknown } | undefined)?.operationId;
  return typeof id === 'string' ? id : undefined;
}

/** onRoute hook of the /v0 scope: attaches the route's role, or refuses a route the policy does not know. */
export function attachRequiredRole(route: RouteOptions): void {
  const operationId = operationIdOf(route);
  const role = requiredRole(operationId);
  if (!role) {
    throw new Error(`${String(route.method)} ${route.url} (operationId ${operationId ?? 'missing'}) has no access rule: add it to OPERATION_ROLES in src/auth/policy.ts`);
  }
  route.config = { ...route.config, requiredRole: role };
}

/**
 * Run by the credential check once it knows the key (src/api/auth.ts), in the
 * same hook: true when the key's role reaches the route's, else answers 403
 * `forbidden` saying what the key may do. A request that matched no route (a
 * 404) has no role to check and goes on to be answered 404.
 */
export function authorizeRoute(request: FastifyRequest, reply: FastifyReply): boolean {
  const needed = request.routeOptions.config.requiredRole;
  const key = request.apiKey;
  if (needed === undefined || (key && hasRole(key, needed))) return true;
  const operationId = operationIdOf(request.routeOptions) ?? request.url;
  const why = key ? operationRefusal(key, operationId) : undefined;
  void sendProblem(reply, problemOf('forbidden', why ?? `${operationId} needs a key with role ${needed} or above`));
  return false;
}

/** Whether the request's key may see sets of this environment (a set it may not see is answered 404). */
export function seesSetEnv(key: ApiKeyRecord | null, env: string): boolean {
  return key !== null && seesEnv(key, env);
}

/** The 404 of a set that does not exist, or that the key may not see: one answer for both. */
export function setNotFound(id: string): RunsetError {
  return new RunsetError('not_found', `no Test Run Set with id ${id}`);
}
