/**
 * The stored rows, as both backends read them, and their mapping to records.
 * The backends differ only in how a timestamp arrives (SQLite: the ISO string
 * it was written as; PostgreSQL: a Date), so the shapes are generic in it and
 * each backend builds its mappers with its own `stamp`.
 */
import type { Counts, RunState } from '../core/states.js';
import { type ArtifactRecord, type ClaimedRun, type PlaywrightCase, type TestSpec, type SetControl, type TestRunRecord, type ResultCase, type TestRunSetRecord, type TestSelection, type TestType } from '../core/types.js';
import { isKeyRole, type ApiKeyRecord } from '../core/keys.js';
import { isRestartReason, restartsOf } from '../core/starts.js';
import type { SuiteVersionInfo } from '../core/suites.js';
import type { WorkerInfo } from './workers.js';
import type { SetAsk } from './set-views.js';

export interface SetRow<T> {
  id: string;
  env: string;
  status: RunState;
  created_at: T;
  started_at: T | null;
  ended_at: T | null;
  count_waiting: number;
  count_running: number;
  count_success: number;
  count_fail: number;
  count_failing: number;
}

export interface RunRow<T> {
  id: string;
  set_id: string;
  position: number;
  name: string;
  type: string;
  status: RunState;
  attempts: number;
  started_at: T | null;
  ended_at: T | null;
  duration_ms: number | null;
  error: string | null;
  output: string | null;
  ran_on: string | null;
  /** The lease's holder (RUNNING, or reserved while WAITING); null when unleased. */
  worker_id: string | null;
  expected_ms: number | null;
  /** SQLite: 0 or 1; PostgreSQL: a boolean. */
  skipped: number | boolean;
  /** SQLite: 0 or 1; PostgreSQL: a boolean. */
  quarantined: number | boolean;
  /** SQLite: a JSON list as text; PostgreSQL: the list (jsonb); null: none. */
  result_cases: string | ResultCase[] | null;
  starts: number;
  /** Why each start it lost was lost, in order. SQLite: a JSON list as text; PostgreSQL: the list (jsonb). */
  lost_starts: string | unknown[];
}

export interface KeyRow<T> {
  id: string;
  name: string;
  role: string;
  /** SQLite: a JSON array as text; PostgreSQL: a text[]; null: every environment. */
  envs: string | string[] | null;
  expires_at: T | null;
  created_at: T;
  last_used_at: T | null;
  revoked_at: T | null;
}

export interface ArtifactRow<T> {
  id: string;
  run_id: string;
  set_id: string;
  name: string;
  content_type: string;
  /** PostgreSQL's bigint arrives as a string. */
  size: number | string;
  location: string;
  created_at: T;
}

/** A suite version with its set count and latest set (both backends select the same columns). */
export interface SuiteVersionRow<T> {
  id: string;
  /** PostgreSQL's bigint and count(*) arrive as strings. */
  size: number | string;
  files: number;
  source_commit: string | null;
  location: string;
  created_at: T;
  sets: number | string;
  last_set_at: T | null;
}

export function countsOf(row: SetRow<unknown>): Counts {
  return { WAITING: row.count_waiting, RUNNING: row.count_running, SUCCESS: row.count_success, FAIL: row.count_fail };
}

/** What a claim returns, from a claimed member's row with its spec and set variables parsed (both stores). */
export function toClaimed(
  row: { id: string; set_id: string; env: string; claims: number; batch_key: string | null; expected_ms: number | null; suite?: string | null; spec: unknown; variables: unknown },
  workerId: string,
): ClaimedRun {
  return {
    // Only a set that runs a suite version says so: a claim of the server's own tests is as it always was.
    ...(row.suite ? { suiteVersion: row.suite } : {}),
    id: row.id,
    setId: row.set_id,
    env: row.env,
    expectedMs: row.expected_ms ?? 0,
    spec: row.spec as ClaimedRun['spec'],
    variables: row.variables as ClaimedRun['variables'],
    claim: row.claims,
    workerId,
    batchKey: row.batch_key,
  };
}

/** Row → record mappers for a backend whose timestamps arrive as T. */
export function rowMappers<T>(stamp: (value: T) => string) {
  const optional = (value: T | null): string | null => (value === null ? null : stamp(value));
  return {
    stamp,
    optional,
    toSet: (row: SetRow<T>): TestRunSetRecord => ({
      id: row.id,
      env: row.env,
      status: row.status,
      counts: countsOf(row),
      failing: row.count_failing,
      createdAt: stamp(row.created_at),
      startedAt: optional(row.started_at),
      endedAt: optional(row.ended_at),
    }),
    toRun: (row: RunRow<T>): TestRunRecord => ({
      id: row.id,
      setId: row.set_id,
      position: row.position,
      name: row.name,
      type: row.type as TestType,
      status: row.status,
      attempts: row.attempts,
      starts: row.starts,
      // The column holds only the reasons the member moves write (../sql/member-moves.ts).
      restarts: restartsOf(row.starts, (typeof row.lost_starts === 'string' ? (JSON.parse(row.lost_starts) as unknown[]) : row.lost_starts).filter(isRestartReason)),
      startedAt: optional(row.started_at),
      endedAt: optional(row.ended_at),
      durationMs: row.duration_ms,
      error: row.error,
      output: row.output,
      workerId: row.ran_on,
      heldBy: row.status === 'WAITING' ? row.worker_id : null,
      expectedMs: row.expected_ms,
      skipped: row.skipped === true || row.skipped === 1,
      quarantined: row.quarantined === true || row.quarantined === 1,
      cases: row.result_cases === null || row.result_cases === undefined ? [] : typeof row.result_cases === 'string' ? (JSON.parse(row.result_cases) as ResultCase[]) : row.result_cases,
    }),
    toKey: (row: KeyRow<T>): ApiKeyRecord => ({
      id: row.id,
      name: row.name,
      role: isKeyRole(row.role) ? row.role : 'read', // the columns' CHECK keeps anything else out; fail narrow regardless
      envs: typeof row.envs === 'string' ? (JSON.parse(row.envs) as string[]) : row.envs,
      expiresAt: optional(row.expires_at),
      createdAt: stamp(row.created_at),
      lastUsedAt: optional(row.last_used_at),
      revokedAt: optional(row.revoked_at),
    }),
    toArtifact: (row: ArtifactRow<T>): ArtifactRecord => ({
      id: row.id,
      runId: row.run_id,
      setId: row.set_id,
      name: row.name,
      contentType: row.content_type,
      size: Number(row.size),
      location: row.location,
      createdAt: stamp(row.created_at),
    }),
    toSuiteVersion: (row: SuiteVersionRow<T>, names: string[]): SuiteVersionInfo & { location: string } => ({
      id: row.id,
      size: Number(row.size),
      files: row.files,
      createdAt: stamp(row.created_at),
      commit: row.source_commit,
      names,
      sets: Number(row.sets),
      lastSetAt: optional(row.last_set_at),
      location: row.location,
    }),
  };
}

/** A workers-registry row, times already as ISO strings. */
export interface WorkerRow {
  id: string;
  host: string;
  pid: number;
  slots: number;
  started_at: string;
  heartbeat_at: string;
}

/** A leased member: begun (RUNNING) or held for later (WAITING). */
export interface LeasedRunRow {
  id: string;
  set_id: string;
  name: string;
  type: string;
  status: RunState;
  started_at: string | null;
  worker_id: string;
}

/** Each live worker with the members it holds; leases of workers not listed (gone, stale) are left out. */
export function assembleWorkers(workers: readonly WorkerRow[], leased: readonly LeasedRunRow[]): WorkerInfo[] {
  const byId = new Map<string, WorkerInfo>(
    workers.map((w) => [
      w.id,
      { id: w.id, host: w.host, pid: w.pid, slots: w.slots, startedAt: w.started_at, heartbeatAt: w.heartbeat_at, running: [], held: 0 },
    ]),
  );
  for (const run of leased) {
    const worker = byId.get(run.worker_id);
    if (!worker) continue;
    if (run.status === 'RUNNING') worker.running.push({ setId: run.set_id, runId: run.id, name: run.name, type: run.type, startedAt: run.started_at });
    else worker.held += 1;
  }
  for (const worker of byId.values()) worker.running.sort((a, b) => (a.startedAt ?? '').localeCompare(b.startedAt ?? ''));
  return [...byId.values()];
}

/** A set's fail-fast and cancellation columns. */
export interface ControlRow<T> {
  max_failures: number | null;
  cancelled_at: T | null;
  cancelled_by: string | null;
  cancelled_by_name: string | null;
  cancel_error: string | null;
}

export function controlOf<T>(row: ControlRow<T>, stamp: (value: T) => string): SetControl {
  return {
    maxFailures: row.max_failures,
    cancellation:
      row.cancelled_at === null
        ? null
        : { at: stamp(row.cancelled_at), byKeyId: row.cancelled_by, byKeyName: row.cancelled_by_name, error: row.cancel_error ?? 'cancelled' },
  };
}

/** What a set was asked for (SetAsk), as stored; `J` is a JSON column as the driver gives it (SQLite: text; PostgreSQL: parsed). */
export interface AskedRow<J> {
  overrides: J;
  labels: J;
  suite: string | null;
  selection: J | null;
  timeout_seconds: number | null;
  concurrency_group: string | null;
}

export function askedOf<J>(row: AskedRow<J>, json: (value: J) => unknown): SetAsk {
  return {
    overrides: json(row.overrides) as SetAsk['overrides'],
    labels: json(row.labels) as SetAsk['labels'],
    suiteVersion: row.suite,
    selection: row.selection === null ? null : (json(row.selection) as TestSelection),
    timeoutSeconds: row.timeout_seconds,
    concurrencyGroup: row.concurrency_group,
  };
}

/** The members that run a listed Playwright case, by id (rows of test_runs' id and parsed spec). */
export function playwrightCasesOf(rows: ReadonlyArray<{ id: string; spec: TestSpec }>): Map<string, PlaywrightCase> {
  const out = new Map<string, PlaywrightCase>();
  for (const row of rows) if (row.spec.type === 'playwright' && row.spec.case) out.set(row.id, row.spec.case);
  return out;
}
