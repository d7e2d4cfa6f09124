/**
 * A set's result as an agent fixing a failure needs it: counts, and for each
 * failure its error, the first lines of its output, Playwright's error context,
 * links to its trace and screenshot, whether it failed before and how flaky it
 * is, and its quarantine. Every text is bounded (./bounds.ts). All of it comes
 * from the API with the caller's key: nothing here sees more than the key does.
 */
import type { RunsetClient } from '../client/client.js';
import type { QuarantineEntry } from '../client/quarantine.js';
import type { TestHistorySummary } from '../client/insight.js';
import { setPageUrl } from '../client/links.js';
import { isQuarantined, type TestRun, type TestRunSetStatus } from '../client/types.js';
import { ranAgainText } from '../core/starts.js';
import { BOUNDS, clip, firstLines } from './bounds.js';
import type { Failure, SetOutcome, SetResult } from './schemas.js';

interface Artifact { id: string; name: string; contentType: string; size: number; url: string }

/** The resource an error context is read at in full (./resources.ts serves it). */
export function errorContextUri(setId: string, testRunId: string): string {
  return `runset://sets/${setId}/test-runs/${testRunId}/error-context`;
}

/**
 * Where a path of the server's (`/api/v0/artifacts/…`, `/trace-viewer/…`) is,
 * from the client's base address, which may sit under a prefix (…/runset/api).
 */
export function absolute(client: RunsetClient, path: string): string {
  return `${client.url.replace(/\/api$/, '')}${path}`;
}

/** A trace opens in the dashboard's trace viewer (for a person signed in to it): `/trace-viewer/index.html?trace=<its path>`. */
function viewerOf(client: RunsetClient, artifact: Artifact): { viewer?: string } {
  if (!/^trace.*\.zip$/i.test(artifact.name)) return {};
  return { viewer: absolute(client, `/trace-viewer/index.html?${new URLSearchParams({ trace: artifact.url }).toString()}`) };
}

export function artifactsOf(run: TestRun): Artifact[] {
  if (!Array.isArray(run.artifacts)) return [];
  return (run.artifacts as unknown[]).filter((a): a is Artifact => typeof a === 'object' && a !== null && typeof (a as Artifact).url === 'string' && typeof (a as Artifact).name === 'string');
}

/** Playwright writes its error context as error-context.md (error-context-retry1.md for a retry): the last attempt's. */
export function errorContextArtifact(run: TestRun): Artifact | undefined {
  return artifactsOf(run).findLast((a) => /error-context.*\.md$/i.test(a.name) || a.contentType.startsWith('text/markdown'));
}

export function failedMembers(runs: readonly TestRun[]): TestRun[] {
  return runs.filter((r) => r.status === 'FAIL');
}

/** The set after a create or a wait: status, counts and the names of what failed. */
export async function setOutcome(client: RunsetClient, status: TestRunSetStatus, note?: string): Promise<SetOutcome> {
  const finished = status.status === 'SUCCESS' || status.status === 'FAIL';
  const failed = status.progress.counts.FAIL > 0 ? failedMembers((await client.listTestRuns(status.id)) ?? []).map((r) => r.name) : [];
  return {
    setId: status.id,
    status: status.status,
    finished,
    counts: status.progress.counts,
    url: setPageUrl(client.url, status.id),
    failed: failed.slice(0, BOUNDS.failedNames),
    ...(note ? { note } : {}),
  };
}

export interface ResultOptions {
  offset: number;
  limit: number;
  errorContext: boolean;
}

export async function readSetResult(client: RunsetClient, setId: string, options: ResultOptions): Promise<SetResult> {
  const [status, env, runs] = await Promise.all([client.getTestRunSet(setId), client.getTestRunSetEnv(setId), client.listTestRuns(setId)]);
  const failed = failedMembers(runs ?? []);
  const shown = failed.slice(options.offset, options.offset + options.limit);
  const quarantine = env === null ? [] : await client.listQuarantine(env);
  const failures = await Promise.all(shown.map((run) => describeFailure(client, status.id, env, run, quarantine, options.errorContext)));
  const rest = failed.length - options.offset - shown.length;
  return {
    setId: status.id,
    env,
    status: status.status,
    counts: status.progress.counts,
    createdAt: status.createdAt,
    endedAt: status.endedAt,
    url: setPageUrl(client.url, status.id),
    failuresTotal: failed.length,
    failures,
    ...(rest > 0 ? { note: `${rest} more failures not shown: call get_set_result again with offset ${options.offset + shown.length}` } : {}),
  };
}

async function describeFailure(client: RunsetClient, setId: string, env: string | null, run: TestRun, quarantine: QuarantineEntry[], withContext: boolean): Promise<Failure> {
  const page = setPageUrl(client.url, setId);
  const contextFile = errorContextArtifact(run);
  const [history, context] = await Promise.all([
    env === null ? null : testHistory(client, env, run.name),
    withContext && contextFile ? client.readArtifactText(contextFile.url) : null,
  ]);
  const contextUri = contextFile ? errorContextUri(setId, run.id) : null;
  return {
    testRunId: run.id,
    name: run.name,
    type: run.type,
    attempts: run.attempts,
    ranAgain: ranAgainText(run),
    error: run.error === null ? null : clip(run.error, BOUNDS.errorChars, page).text,
    output: run.output ? firstLines(run.output, BOUNDS.outputLines, BOUNDS.outputChars, page).text : null,
    errorContext: context === null ? null : clip(context, BOUNDS.errorContextChars, contextUri ?? undefined).text,
    errorContextResource: contextUri,
    artifacts: artifactsOf(run).slice(0, BOUNDS.artifacts).map((a) => ({ name: a.name, contentType: a.contentType, size: a.size, url: absolute(client, a.url), ...viewerOf(client, a) })),
    quarantined: isQuarantined(run),
    quarantinedNow: quarantine.some((q) => q.name === run.name),
    history: history === null ? null : pastOf(history, setId),
  };
}

/** The test's summary in its environment (GET /v0/tests filters by "name contains": keep the exact one). */
export async function testHistory(client: RunsetClient, env: string, name: string): Promise<TestHistorySummary | null> {
  const tests = await client.listTests(env, name);
  return tests.find((t) => t.name === name) ?? null;
}

/** Its figures, and whether it failed in sets other than this one. */
function pastOf(summary: TestHistorySummary, setId: string): Failure['history'] {
  const before = summary.lastOutcomes.filter((o) => o.setId !== setId && o.result === 'FAIL' && !o.cancelled);
  const last = summary.lastFailure && summary.lastFailure.setId !== setId ? summary.lastFailure : null;
  const first = before[0];
  return {
    runs: summary.runs,
    passRate: summary.passRate,
    flakyRate: summary.flakyRate,
    failedBefore: before.length,
    lastFailureBefore: last ? { setId: last.setId, endedAt: last.endedAt, error: last.error } : first ? { setId: first.setId, endedAt: first.endedAt, error: null } : null,
  };
}
