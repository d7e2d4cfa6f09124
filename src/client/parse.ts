/**
 * Tolerant readers for the server's answers. They check what the client relies
 * on (an id, a status string, counts that are numbers) and accept everything
 * else: a newer server may add fields or states, and seed 4.3 tells clients to
 * keep polling on any status they do not recognise. A body that lacks what the
 * client needs yields null, which the caller turns into `invalid_response`.
 */
import type { CancelResult, Counts, CreateTestRunSetResult, QueuePlace, TestRun, TestRunSetStatus, Worker } from './types.js';
import { isRestartReason } from '../core/starts.js';

type Json = Record<string, unknown>;

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function readCreateResult(body: unknown): CreateTestRunSetResult | null {
  if (!isRecord(body) || typeof body.testRunSetId !== 'string' || body.testRunSetId === '') return null;
  return { testRunSetId: body.testRunSetId };
}

/** Missing counts read as 0 rather than failing the whole poll. */
export function readCounts(value: unknown): Counts {
  const counts = isRecord(value) ? value : {};
  return { WAITING: count(counts.WAITING), RUNNING: count(counts.RUNNING), SUCCESS: count(counts.SUCCESS), FAIL: count(counts.FAIL) };
}

/** A page of GET /v0/test-run-sets: its sets' status documents (an item without an id or status is left out). */
export function readSetPage(body: unknown): TestRunSetStatus[] | null {
  if (!isRecord(body) || !Array.isArray(body.testRunSets)) return null;
  return body.testRunSets.map(readStatus).filter((set): set is TestRunSetStatus => set !== null);
}

export function readStatus(body: unknown): TestRunSetStatus | null {
  if (!isRecord(body) || typeof body.id !== 'string' || typeof body.status !== 'string') return null;
  const progress = isRecord(body.progress) ? body.progress : {};
  return {
    ...body,
    id: body.id,
    status: body.status,
    startedAt: stringOrNull(body.startedAt),
    endedAt: stringOrNull(body.endedAt),
    createdAt: typeof body.createdAt === 'string' ? body.createdAt : '',
    progress: { ...progress, counts: readCounts(progress.counts) },
  };
}

export function readCancelResult(body: unknown): CancelResult | null {
  const status = readStatus(body);
  return status && { ...status, cancelled: isRecord(body) && body.cancelled === true };
}

function readTestRun(item: unknown, index: number): TestRun | null {
  if (!isRecord(item) || typeof item.status !== 'string') return null;
  const attempts = typeof item.attempts === 'number' && item.attempts >= 0 ? item.attempts : 0;
  const durationMs = typeof item.durationMs === 'number' && item.durationMs >= 0 ? item.durationMs : null;
  return {
    ...item,
    id: typeof item.id === 'string' ? item.id : `#${index + 1}`,
    name: typeof item.name === 'string' && item.name !== '' ? item.name : `test #${index + 1}`,
    type: typeof item.type === 'string' ? item.type : 'unknown',
    status: item.status,
    attempts,
    startedAt: stringOrNull(item.startedAt),
    endedAt: stringOrNull(item.endedAt),
    durationMs,
    error: stringOrNull(item.error),
    output: stringOrNull(item.output),
    ...(typeof item.flaky === 'boolean' ? { flaky: item.flaky } : {}),
    // A server older than these sends neither: the member reads as never restarted.
    ...(typeof item.starts === 'number' && item.starts >= 0 ? { starts: item.starts } : {}),
    ...(Array.isArray(item.restarts) ? { restarts: item.restarts.filter(isRestartReason) } : {}),
    // Tolerant: a server older than the mark sends none, and nothing it ran was marked.
    skipped: item.skipped === true,
    quarantined: item.quarantined === true,
  };
}

export function readTestRuns(body: unknown): TestRun[] | null {
  if (!isRecord(body) || !Array.isArray(body.testRuns)) return null;
  const runs: TestRun[] = [];
  for (const [index, item] of body.testRuns.entries()) {
    const run = readTestRun(item, index);
    if (run === null) return null;
    runs.push(run);
  }
  return runs;
}

function readWorker(item: unknown): Worker | null {
  if (!isRecord(item) || typeof item.id !== 'string') return null;
  const running = Array.isArray(item.running) ? item.running.filter(isRecord) : [];
  return {
    ...item,
    id: item.id,
    host: typeof item.host === 'string' ? item.host : '',
    pid: count(item.pid),
    slots: count(item.slots),
    startedAt: typeof item.startedAt === 'string' ? item.startedAt : '',
    heartbeatAt: typeof item.heartbeatAt === 'string' ? item.heartbeatAt : '',
    held: count(item.held),
    running: running.map((r) => ({
      ...r,
      setId: typeof r.setId === 'string' ? r.setId : '',
      runId: typeof r.runId === 'string' ? r.runId : '',
      name: typeof r.name === 'string' ? r.name : '',
      type: typeof r.type === 'string' ? r.type : 'unknown',
      startedAt: stringOrNull(r.startedAt),
    })),
  };
}

export function readWorkers(body: unknown): Worker[] | null {
  if (!isRecord(body) || !Array.isArray(body.workers)) return null;
  const workers: Worker[] = [];
  for (const item of body.workers) {
    const worker = readWorker(item);
    if (worker === null) return null;
    workers.push(worker);
  }
  return workers;
}

/** The parts of an RFC 9457 problem document the client shows; anything missing is null. */
export function readProblem(body: unknown): { code: string | null; title: string | null; detail: string | null } {
  if (!isRecord(body)) return { code: null, title: null, detail: null };
  return { code: stringOrNull(body.code), title: stringOrNull(body.title), detail: stringOrNull(body.detail) };
}

/** A set's details' `queue`: null when the set is not queued, or the server does not say (one older than queues). */
export function readQueuePlace(details: unknown): QueuePlace | null {
  const queue = isRecord(details) ? details.queue : undefined;
  if (!isRecord(queue) || typeof queue.ahead !== 'number' || typeof queue.limit !== 'number') return null;
  return { ahead: queue.ahead, limit: queue.limit, holders: Array.isArray(queue.holders) ? queue.holders.filter((h): h is string => typeof h === 'string') : [] };
}

/** A set's details' `failing`: how many member ends failed the set, by the server's rule; null when the server does not say (one older than it). */
export function readFailing(details: unknown): number | null {
  const failing = isRecord(details) ? details.failing : undefined;
  return typeof failing === 'number' && Number.isInteger(failing) && failing >= 0 ? failing : null;
}
