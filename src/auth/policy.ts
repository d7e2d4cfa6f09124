/**
 * Who may do what: the authorization policy of API keys, pure (no store, no
 * HTTP), so it is unit-tested on its own and read in one place.
 *
 * - A role ranks read < trigger < admin; each may do what the ones below may.
 * - The worker role stands apart: it may use the worker protocol (claim and
 *   run members, report outcomes, upload artifacts) and nothing else, so the
 *   key a runner machine or CI job holds cannot read, create or cancel sets,
 *   nor sign in to the dashboard. Admin keys may use the worker protocol too
 *   (an admin could make itself a worker key anyway); read and trigger keys may not.
 * - Every API operation (by its OpenAPI operationId) needs one role. The API
 *   refuses to start with a /v0 route that has no rule here (src/api/permission.ts).
 * - A key limited to environments sees only sets of those environments: any
 *   other set is answered exactly as a set that does not exist (404).
 */
import { KEY_ROLES, type KeyRole } from '../core/keys.js';

export { isKeyRole } from '../core/keys.js';

/** The parts of a key the policy judges. */
export interface KeyScope {
  role: KeyRole;
  envs: readonly string[] | null;
  expiresAt: string | null;
}

/** The role each operation needs. A new route gets its line here, or the API does not start. */
export const OPERATION_ROLES: Readonly<Record<string, KeyRole>> = Object.freeze({
  getTestRunSet: 'read',
  listTestRuns: 'read',
  listTestRunSets: 'read',
  getTestRunSetDetails: 'read',
  getArtifact: 'read',
  listEnvironments: 'read',
  listWorkers: 'read',
  listWebhookDeliveries: 'read',
  listTests: 'read',
  getTestHistory: 'read',
  listSuites: 'read',
  getSuite: 'read',
  listQuarantine: 'read',
  createTestRunSet: 'trigger',
  uploadSuite: 'trigger',
  nameSuite: 'trigger',
  rerunTestRunSet: 'trigger',
  cancelTestRunSet: 'trigger',
  addQuarantine: 'trigger',
  removeQuarantine: 'trigger',
  listKeys: 'admin',
  createKey: 'admin',
  revokeKey: 'admin',
  // The worker protocol (src/api/routes/worker-protocol.ts): worker keys, and admin ones.
  getWorkerSettings: 'worker',
  registerWorker: 'worker',
  heartbeatWorker: 'worker',
  removeWorker: 'worker',
  listBatchWorkers: 'worker',
  listWaitingWork: 'worker',
  claimRuns: 'worker',
  claimBatch: 'worker',
  startRun: 'worker',
  heartbeatRun: 'worker',
  finishRun: 'worker',
  finishAndClaim: 'worker',
  releaseRuns: 'worker',
  workerNotices: 'worker',
  uploadArtifact: 'worker',
  removeArtifacts: 'worker',
  getSuiteArchive: 'worker',
});

/** What each role adds, for the message of a refusal. */
const ROLE_RIGHTS: Readonly<Record<KeyRole, string>> = Object.freeze({
  read: 'read sets, members, artifacts, environments, workers, suite versions and quarantined tests',
  trigger: 'also create, run again and cancel sets, upload suite versions, and quarantine tests',
  admin: 'also manage keys and use the worker protocol',
  worker: 'use the worker protocol only (claim and run members, report outcomes, upload artifacts)',
});

/** The ranked roles, lowest first; worker is apart from them. */
const RANKED: readonly KeyRole[] = KEY_ROLES.filter((r) => r !== 'worker');

export function roleRank(role: KeyRole): number {
  return RANKED.indexOf(role);
}

/** The role an operation needs, or undefined when it has no rule (never allowed). */
export function requiredRole(operationId: string | undefined): KeyRole | undefined {
  return operationId !== undefined && Object.hasOwn(OPERATION_ROLES, operationId) ? OPERATION_ROLES[operationId] : undefined;
}

export function hasRole(key: Pick<KeyScope, 'role'>, needed: KeyRole): boolean {
  if (key.role === 'worker') return needed === 'worker';
  if (needed === 'worker') return key.role === 'admin';
  return roleRank(key.role) >= roleRank(needed);
}

/** The operations a key may call: what the dashboard shows and hides. */
export function allowedOperations(key: KeyScope): string[] {
  return Object.entries(OPERATION_ROLES)
    .filter(([, role]) => hasRole(key, role))
    .map(([operationId]) => operationId);
}

/** "role read: may read …, in environments staging, preview" — said by every 403. */
export function describeRights(key: KeyScope): string {
  const rights = key.role === 'worker'
    ? ROLE_RIGHTS.worker
    : RANKED.slice(0, roleRank(key.role) + 1)
      .map((r) => ROLE_RIGHTS[r])
      .join(', ');
  const where = key.envs === null ? 'in every environment' : `only in environment${key.envs.length === 1 ? '' : 's'} ${key.envs.join(', ')}`;
  return `this key has role ${key.role}: it may ${rights}, ${where}`;
}

/** Why the key may not call the operation, or undefined when it may. */
export function operationRefusal(key: KeyScope, operationId: string): string | undefined {
  const needed = requiredRole(operationId);
  if (needed === undefined) return `${operationId} has no access rule; ${describeRights(key)}`;
  if (hasRole(key, needed)) return undefined;
  const who = needed === 'worker' ? 'role worker (or admin)' : `role ${needed} or above`;
  return `${operationId} needs ${who}; ${describeRights(key)}`;
}

/** Whether the key may see (and act on) sets of this environment. */
export function seesEnv(key: KeyScope, env: string): boolean {
  return key.envs === null || key.envs.includes(env);
}

/** Why the key may not create a set in this environment, or undefined when it may. */
export function createRefusal(key: KeyScope, env: string): string | undefined {
  return seesEnv(key, env) ? undefined : `this key may not create sets in environment ${env}; ${describeRights(key)}`;
}

/**
 * The environments a set listing may return for a key and an optional `env`
 * filter: undefined means no restriction, an empty list means nothing.
 */
export function listableEnvs(key: KeyScope, requested: string | undefined): readonly string[] | undefined {
  if (requested !== undefined) return seesEnv(key, requested) ? [requested] : [];
  return key.envs ?? undefined;
}

/** An expired key is refused like a revoked one. */
export function isExpired(key: Pick<KeyScope, 'expiresAt'>, now: number = Date.now()): boolean {
  return expiryOf(key) <= now;
}

/** When the key expires, in ms since the epoch; Infinity for a key that never does. */
export function expiryOf(key: Pick<KeyScope, 'expiresAt'>): number {
  return key.expiresAt === null ? Infinity : Date.parse(key.expiresAt);
}

/** Whether an admin key may see and revoke another key: only keys no wider than its own environments. */
export function managesKey(actor: KeyScope, target: Pick<KeyScope, 'envs'>): boolean {
  if (actor.envs === null) return true;
  return target.envs !== null && target.envs.every((e) => actor.envs!.includes(e));
}

/**
 * Why the actor may not create a key with this role and these environments, or
 * undefined: a key never grants more than the key that made it.
 */
export function grantRefusal(actor: KeyScope, wanted: { role: KeyRole; envs: readonly string[] | null }): string | undefined {
  if (!hasRole(actor, wanted.role)) return `a key may not create a key with a higher role than its own (${actor.role})`;
  if (!managesKey(actor, wanted)) return `this key may only create keys limited to its own environments (${actor.envs!.join(', ')}); pass envs within them`;
  return undefined;
}
