/**
 * Schema pieces every route file shares: ids in the path, named schemas, the
 * responses a route documents (every status it can answer, problems as
 * application/problem+json), and the credentials the /v0 hook accepts.
 */
import type { Static, TSchema, TUnsafe } from 'typebox';
import { Type } from '../../core/typebox.js';
import { CreateTestRunSetBody, CreateTestRunSetResult, HealthSchema, ProblemSchema, refTo, TestRunList, TestRunSchema, TestRunSetStatus, TestSelectionSchema } from '../../core/wire.js';
import { NameSuiteBody, SetSuiteView, SuiteVersionList, SuiteVersionView } from '../../core/wire-suites.js';
import { EnvironmentList, QueueView, RerunTestRunSetBody, SessionInfo, SignInBody, TestRunSetDetails, TestRunSetPage, TestRunSetSummary, WorkerList, WorkerView } from '../../core/wire-dashboard.js';
import { CancellationView, CancelTestRunSetResult } from '../../core/wire-control.js';
import { CreateKeyBody, CreatedKey, KeyList, KeyView } from '../../core/wire-keys.js';
import { WebhookAttemptView, WebhookDeliveryList, WebhookDeliveryView } from '../../core/wire-webhooks.js';
import { TestHistory, TestHistoryRun, TestList, TestOutcome, TestSummary } from '../../core/wire-tests.js';
import { WORKER_SCHEMAS } from '../../core/wire-worker.js';
import { QuarantineAdded, QuarantineEntryView, QuarantineList } from '../../core/wire-quarantine.js';
import { UUID_PATTERN } from '../../core/uuid.js';

/** `{ id }` in the path, a uuid (the pattern says which spelling); anything else answers 400 invalid_id. */
export function uuidParams(description: string) {
  return Type.Object({ id: Type.String({ format: 'uuid', pattern: UUID_PATTERN, description }) });
}

export const SetIdParams = uuidParams('Test Run Set id (uuid).');

type Named = TSchema & { $id: string };

/**
 * The named schemas, registered once (app.addSchema, src/api/app.ts): each is
 * a component of the OpenAPI document under its `$id` (`TestRunSetStatus`, not
 * `def-0`), which is what generated clients name their types after. A named
 * schema nested in another is referenced there with refTo (src/core/wire.ts).
 */
export const SHARED_SCHEMAS: readonly Named[] = [
  ProblemSchema,
  CreateTestRunSetBody,
  TestSelectionSchema,
  CreateTestRunSetResult,
  TestRunSetStatus,
  TestRunList,
  TestRunSchema,
  TestRunSetPage,
  TestRunSetSummary,
  TestRunSetDetails,
  RerunTestRunSetBody,
  CancellationView,
  EnvironmentList,
  SignInBody,
  SessionInfo,
  WorkerList,
  WorkerView,
  CancelTestRunSetResult,
  HealthSchema,
  WebhookDeliveryList,
  WebhookDeliveryView,
  WebhookAttemptView,
  KeyView,
  KeyList,
  CreateKeyBody,
  CreatedKey,
  TestList,
  TestSummary,
  TestOutcome,
  TestHistory,
  TestHistoryRun,
  SuiteVersionView,
  SuiteVersionList,
  NameSuiteBody,
  SetSuiteView,
  QuarantineEntryView,
  QuarantineList,
  QuarantineAdded,
  QueueView,
  ...WORKER_SCHEMAS,
] as TSchema[] as Named[];

/**
 * A body or response schema by reference to a named one (listed in
 * SHARED_SCHEMAS), typed as the schema itself; `description` says what a
 * response is (else the document would say "Default Response").
 */
export function named<T extends TSchema>(schema: T, description?: string): TUnsafe<Static<T>> {
  const id = (schema as Partial<Named>).$id;
  if (!id || !SHARED_SCHEMAS.includes(schema as unknown as Named)) throw new Error(`named(): list the schema ${id ?? '(no $id)'} in SHARED_SCHEMAS`);
  return refTo(schema, description ? { description } : {});
}

/** What each problem status means, for the OpenAPI document (the `code` field says exactly which error). */
const PROBLEM_STATUSES: Record<number, string> = {
  400: 'Bad request: a malformed id, URL, query, header or body (`code` says which)',
  401: 'Missing, malformed, unknown or revoked API key (or dashboard session); `WWW-Authenticate: Bearer`',
  403: 'Refused: the credential may not do this (`code` says why), e.g. a cookie-authenticated write from another origin or without the CSRF token',
  404: 'No such resource',
  409: 'Conflict with the current configuration, or (worker protocol) a lease that is no longer this worker\'s: nothing was written',
  413: 'Request body over 1 MiB (an artifact upload: over the artifact size limit)',
  415: 'Request body is not of a media type the route takes (application/json; a suite upload: application/gzip)',
  422: 'Well-formed, but cannot be done (`code` says why)',
  429: 'Too many sets created by this key this minute; `Retry-After` says when to retry',
  500: 'A server fault (logged server-side, never with a stack trace in the answer)',
  503: 'The store is unreachable (PostgreSQL restarting) or the server is shutting down; `Retry-After` says when to retry',
};

/** Statuses every route can answer whatever it does: a fault, an unreachable store, a server closing. */
const ALWAYS = [500, 503];
/** Statuses any route taking a body can answer, before its handler runs. */
export const BODY_PROBLEMS = [400, 413, 415] as const;

interface ProblemResponse {
  description: string;
  content: { 'application/problem+json': { schema: { $ref: string } } };
}

/**
 * The problem responses a route documents: the statuses given, plus 500 and
 * 503 which any route can answer. Each is application/problem+json with the
 * Problem schema (that is also how the server serialises them).
 */
export function problems(...statuses: number[]): Record<number, ProblemResponse> {
  const all = [...new Set([...statuses, ...ALWAYS])].sort((a, b) => a - b);
  return Object.fromEntries(
    all.map((s) => {
      const description = PROBLEM_STATUSES[s];
      if (!description) throw new Error(`problems(): no description for status ${s}; add it to PROBLEM_STATUSES`);
      return [s, { description, content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } } }];
    }),
  );
}

/** Either credential works: a Bearer key, or the dashboard's session cookie (with X-CSRF-Token on writes). */
export const SECURED: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { sessionCookie: [] }];
/** A Bearer key only: the worker protocol takes no dashboard session. */
export const BEARER_ONLY: Array<Record<string, string[]>> = [{ bearerAuth: [] }];
/** No credential needed (health, sign-in): stated, so the document says so rather than leaving it unsaid. */
export const PUBLIC: Array<Record<string, string[]>> = [];
