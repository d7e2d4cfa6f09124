/**
 * The page's only way to the server: the same JSON API that CI uses, with the
 * session cookie instead of a Bearer key. Writes carry the session's CSRF token.
 */
import type { QuarantineAdded, QuarantineBody, QuarantineList } from '../../core/wire-quarantine.js';
import type { Artifact, TestRun, TestRunSetStatus, CreateTestRunSetResult } from '../../core/wire.js';
import type { CancelTestRunSetResult } from '../../core/wire-control.js';
import type { CreateKeyBody, CreatedKey, KeyList } from '../../core/wire-keys.js';
import type { WebhookDeliveryList } from '../../core/wire-webhooks.js';
import type { TestHistory, TestList, TestSummary } from '../../core/wire-tests.js';
import type { SuiteVersionList } from '../../core/wire-suites.js';
import type { EnvironmentList, SessionInfo, TestRunSetDetails, TestRunSetPage, WorkerList } from '../../core/wire-dashboard.js';
import { currentPath, navigate } from './router.js';

export type { Artifact };
export type Member = TestRun;
export type SetStatus = TestRunSetStatus;
export type { TestSummary };
export type TestHistoryRun = TestHistory['runs'][number];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What a page about one set says when loading it failed: a 404 means the id names no set. */
export function setLoadError(err: unknown): string {
  return err instanceof ApiError && err.status === 404 ? 'There is no set with this id.' : (err as Error).message;
}

let csrfToken = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const res = await fetch(`/api/v0${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (res.status === 401 && path !== '/session') {
    // The session ended (expired, signed out elsewhere, key revoked): back to sign-in, then here.
    navigate(`/signin?next=${encodeURIComponent(currentPath())}`, true);
  }
  if (!res.ok) {
    const problem = (await res.json().catch(() => ({}))) as { code?: string; detail?: string };
    throw new ApiError(res.status, problem.code ?? 'http_error', problem.detail ?? `the server answered ${res.status}`);
  }
  return (res.status === 204 ? undefined : await res.json()) as T;
}

function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const api = {
  listSets: (p: { env?: string; status?: string; label?: string; cursor?: string; limit?: number }) =>
    call<TestRunSetPage>('GET', `/test-run-sets${query({ ...p, limit: p.limit ? String(p.limit) : undefined })}`),
  getSet: (id: string) => call<SetStatus>('GET', `/test-run-sets/${encodeURIComponent(id)}`),
  getDetails: (id: string) => call<TestRunSetDetails>('GET', `/test-run-sets/${encodeURIComponent(id)}/details`),
  listMembers: async (id: string) => (await call<{ testRuns: Member[] }>('GET', `/test-run-sets/${encodeURIComponent(id)}/test-runs`)).testRuns,
  listTests: (p: { env: string; name?: string; cursor?: string; limit?: number }) =>
    call<TestList>('GET', `/tests${query({ ...p, limit: p.limit ? String(p.limit) : undefined })}`),
  testHistory: (p: { env: string; name: string; cursor?: string; limit?: number }) =>
    call<TestHistory>('GET', `/tests/history${query({ ...p, limit: p.limit ? String(p.limit) : undefined })}`),
  listWorkers: () => call<WorkerList>('GET', '/workers'),
  listSuites: () => call<SuiteVersionList>('GET', '/suites'),
  listWebhookDeliveries: (setId: string) => call<WebhookDeliveryList>('GET', `/webhook-deliveries${query({ setId })}`),
  environments: async () => (await call<EnvironmentList>('GET', '/environments')).environments,
  createSet: (env: string, envOverride: Record<string, string>) =>
    call<CreateTestRunSetResult>('POST', '/test-run-sets', Object.keys(envOverride).length > 0 ? { env, envOverride } : { env }),
  cancel: (id: string) => call<CancelTestRunSetResult>('POST', `/test-run-sets/${encodeURIComponent(id)}/cancel`),
  rerun: (id: string) => call<CreateTestRunSetResult>('POST', `/test-run-sets/${encodeURIComponent(id)}/rerun`),
  signIn: async (key: string) => {
    const info = await call<SessionInfo>('POST', '/session', { key });
    csrfToken = info.csrfToken;
    return info;
  },
  session: () => call<SessionInfo>('GET', '/session'),
  listKeys: async () => (await call<KeyList>('GET', '/keys')).keys,
  createKey: (body: CreateKeyBody) => call<CreatedKey>('POST', '/keys', body),
  revokeKey: (id: string) => call<void>('DELETE', `/keys/${encodeURIComponent(id)}`),
  signOut: () => call<void>('DELETE', '/session'),
  listQuarantine: async (env: string) => (await call<QuarantineList>('GET', `/quarantine${query({ env })}`)).quarantine,
  addQuarantine: (body: QuarantineBody) => call<QuarantineAdded>('POST', '/quarantine', body),
  removeQuarantine: (env: string, name: string) => call<void>('DELETE', `/quarantine${query({ env, name })}`),
};

/** Where an artifact is served: the URL the server gave when it is a path of this site, else its API path. */
export function artifactUrl(artifact: Artifact): string {
  return artifact.url.startsWith('/') && !artifact.url.startsWith('//') ? artifact.url : `/api/v0/artifacts/${encodeURIComponent(artifact.id)}`;
}
