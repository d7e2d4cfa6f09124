/**
 * What an agent or a person reads to understand a failure, as the client reads
 * it: the environments (declared variables, secret values never sent), a test's
 * recent outcomes and flaky rate (GET /v0/tests), the server's shapes from
 * src/core (type-only imports). Tolerant like ./parse.ts: what callers rely on
 * is checked, the rest passes through.
 */
import type { EnvironmentView } from '../core/wire-dashboard.js';
import type { TestSummary } from '../core/wire-tests.js';
import { isRecord } from './parse.js';

export type Environment = EnvironmentView;
export type TestHistorySummary = TestSummary;

export function readEnvironments(body: unknown): Environment[] | null {
  if (!isRecord(body) || !Array.isArray(body.environments)) return null;
  const ok = body.environments.every((e) => isRecord(e) && typeof e.name === 'string' && Array.isArray(e.variables));
  return ok ? (body.environments as Environment[]) : null;
}

export function readTestSummaries(body: unknown): TestHistorySummary[] | null {
  if (!isRecord(body) || !Array.isArray(body.tests)) return null;
  const ok = body.tests.every((t) => isRecord(t) && typeof t.name === 'string' && Array.isArray(t.lastOutcomes));
  return ok ? (body.tests as TestHistorySummary[]) : null;
}
