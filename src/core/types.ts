/**
 * runset's vocabulary (see DESIGN.md) and the shapes shared by every part.
 *
 * - environment: a named target (`staging`) with variables (`BASE_URL`, …).
 * - test: one declared check in the suite — an HTTP check, one Playwright test
 *   case, or one command.
 * - Test Run Set: one request to run the tests of an environment; it has an id,
 *   a status and counts.
 * - Test Run: one member of a set — one test, executed once (with retries)
 *   against the set's variables.
 * - executor: the code that runs one kind of test (`http`, `command`, …).
 * - worker: a loop that claims WAITING runs from the store and hands them to
 *   executors.
 * - store: where sets, runs and keys live (SQLite embedded, or PostgreSQL).
 */
import type { Counts, RunState } from './states.js';

// ── Tests, as declared in runset.config.yaml and frozen into each member ──────

export interface TestCommon {
  /** Unique in the config. */
  name: string;
  /** Environments this test runs in; `undefined` = every environment. */
  environments?: string[];
  tags: string[];
  timeoutSeconds: number;
  /** Extra tries after a failed one (0 = run once). */
  retries: number;
}

export interface HttpTestSpec extends TestCommon {
  type: 'http';
  request: {
    method: string;
    /** May hold `{{NAME}}` placeholders, substituted from the set's variables. */
    url: string;
    headers?: Record<string, string>;
    body?: string | Record<string, unknown> | unknown[];
  };
  expect: {
    /** Expected status; undefined = any 2xx. */
    status?: number;
    bodyContains?: string;
    /** The response body must be JSON containing this value (objects match as subsets). */
    json?: unknown;
  };
}

export interface CommandTestSpec extends TestCommon {
  type: 'command';
  /** argv — never a shell string. */
  run: string[];
  /** Absolute working directory (resolved from the config file's folder at load). */
  cwd: string;
}

export type TestSpec = HttpTestSpec | CommandTestSpec;
export type TestType = TestSpec['type'];

// ── Environments and their variables ────────────────────────────────────────

/**
 * A variable's value as kept in config and store. Secret values are never held
 * in clear outside the process that uses them: `env` refs are read from the
 * process environment at use, `sealed` values are encrypted at rest.
 */
export type VariableValue =
  | { kind: 'plain'; value: string }
  | { kind: 'env'; name: string }
  | { kind: 'sealed'; box: string };

export interface EnvironmentConfig {
  name: string;
  variables: Record<string, VariableValue>;
}

// ── Stored records ──────────────────────────────────────────────────────────

export interface TestRunSetRecord {
  id: string;
  env: string;
  status: RunState;
  counts: Counts;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
}

export interface TestRunRecord {
  id: string;
  setId: string;
  position: number;
  name: string;
  type: TestType;
  status: RunState;
  /** Executions of the test so far (1 + retries used). */
  attempts: number;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  error: string | null;
  output: string | null;
}

export interface NewTestRun {
  id: string;
  position: number;
  spec: TestSpec;
}

export interface NewTestRunSet {
  id: string;
  env: string;
  /** The set's variables after overrides (secret ones as refs or sealed). */
  variables: Record<string, VariableValue>;
  /** What the client sent, for history (secret override values sealed). */
  overrides: Record<string, VariableValue>;
  keyId: string | null;
  createdAt: string;
  runs: NewTestRun[];
}

/** A member handed to a worker: what to run, and the lease that fences its writes. */
export interface ClaimedRun {
  id: string;
  setId: string;
  spec: TestSpec;
  variables: Record<string, VariableValue>;
  /** Fencing token: bumped by every claim; every later write must carry it. */
  claim: number;
  workerId: string;
}

export interface RunOutcome {
  status: 'SUCCESS' | 'FAIL';
  attempts: number;
  error: string | null;
  output: string;
  durationMs: number;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

// ── Executors ───────────────────────────────────────────────────────────────

export interface ExecutionContext {
  /** Resolved variables, secret ones in clear: never log them. */
  variables: Readonly<Record<string, string>>;
  /** Aborted on timeout, lost lease or shutdown: the executor must stop and clean up. */
  signal: AbortSignal;
}

export interface ExecutionResult {
  passed: boolean;
  /** One line saying why it failed; null when passed. */
  error: string | null;
  /** Captured output (the executor keeps at most the last 64 KiB). */
  output: string;
}

export interface Executor<S extends TestSpec = TestSpec> {
  readonly type: S['type'];
  run(spec: S, ctx: ExecutionContext): Promise<ExecutionResult>;
}
