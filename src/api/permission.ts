/**
 * Where the policy (src/auth/policy.ts) meets the routes: each /v0 route's
 * required role is looked up once, when the route is registered, from its
 * operationId; each request is then one comparison. A route with no rule stops
 * the API from starting, so a new route cannot go out open by omission.
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { problemOf, RunsetError } from '../core/errors.js';
import type { ApiKeyRecord, KeyRole } from '../core/keys.js';
import { hasRole, operationRefusal, requiredRole, seesEnv } from '../auth/policy.js';
import { sendProblem } from './problems.js';
import type { Authorize } from './auth.js';

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

/** onRoute hook: attaches the route's role, or refuses a route the policy does not know. */
export function attachRequiredRole(route: RouteOptions): void {
  roleAttached(route);
}

function roleAttached(route: RouteOptions): KeyRole {
  const operationId = operationIdOf(route);
  const role = requiredRole(operationId);
  if (!role) {
    throw new Error(`${String(route.method)} ${route.url} (operationId ${operationId ?? 'missing'}) has no access rule: add it to OPERATION_ROLES in src/auth/policy.ts`);
  }
  route.config = { ...route.config, requiredRole: role };
  return role;
}

/**
 * onRoute hook of the /v0 scope: attaches the route's role, and puts first
 * among the route's own onRequest hooks the credential check `check` makes
 * for it, with that role already known. Each request then compares the key's
 * role with it: nothing is looked up per request (`request.routeOptions` is an
 * object Fastify builds on every read, which the status GET paid for).
 */
export function guardRoute(check: (authorize: Authorize) => onRequestHookHandler): (route: RouteOptions) => void {
  return (route) => {
    const needed = roleAttached(route);
    const operationId = operationIdOf(route);
    const authorize: Authorize = (request, reply) => hasRoleOrRefuse(request, reply, needed, operationId);
    route.onRequest = [check(authorize), ...[route.onRequest ?? []].flat()];
  };
}

/**
 * The role check, run by the credential check once it knows the key
 * (src/api/auth.ts), in the same hook: true when the key's role reaches
 * `needed`, else answers 403 `forbidden` saying what the key may do.
 */
function hasRoleOrRefuse(request: FastifyRequest, reply: FastifyReply, needed: KeyRole, operationId: string | undefined): boolean {
  const key = request.apiKey;
  if (key && hasRole(key, needed)) return true;
  const operation = operationId ?? operationIdOf(request.routeOptions) ?? request.url;
  const why = key ? operationRefusal(key, operation) : undefined;
  void sendProblem(reply, problemOf('forbidden', why ?? `${operation} needs a key with role ${needed} or above`));
  return false;
}

/**
 * As a route's own check (guardRoute), for a scope whose credential check is
 * one hook for all its routes (the worker protocol): the role is read from the
 * route's config per request. A request that matched no route (a 404) has no
 * role to check and goes on to be answered 404.
 */
export function authorizeRoute(request: FastifyRequest, reply: FastifyReply): boolean {
  const needed = request.routeOptions.config.requiredRole;
  return needed === undefined || hasRoleOrRefuse(request, reply, needed, undefined);
}

/** Whether the request's key may see sets of this environment (a set it may not see is answered 404). */
export function seesSetEnv(key: ApiKeyRecord | null, env: string): boolean {
  return key !== null && seesEnv(key, env);
}

/** The 404 of a set that does not exist, or that the key may not see: one answer for both. */
export function setNotFound(id: string): RunsetError {
  return new RunsetError('not_found', `no Test Run Set with id ${id}`);
}
