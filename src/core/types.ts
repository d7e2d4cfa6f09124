/**
 * runset's vocabulary: the same words, in the same order, as the table in
 * docs/architecture.md (a change to one is a change to both), then the shapes
 * shared by every part.
 *
 * - environment: a named target (`staging`) with variables (`BASE_URL`, …),
 *   declared in `runset.config.yaml`.
 * - config: a `runset.config.yaml` as loaded: environments, tests, webhooks
 *   (`SuiteConfig`, held in variables named `config`).
 * - suite: a folder holding a config and the files its tests need: the
 *   server's own (its config's folder, `suiteDir`, a worker's `--suite-root`)
 *   or a local one the CLI packs (`trigger --suite DIR`).
 * - entry: a test of the config of type `playwright` or a framework: a folder
 *   of that framework's tests, listed into its cases (never "a Playwright
 *   suite"; `suites` in Playwright's and JUnit's reports are their words).
 * - test: one declared check of the config: an HTTP check, one case of an
 *   entry, or one command.
 * - Test Run Set (set): one request to run the tests of an environment: an
 *   id, a status, counts.
 * - Test Run (member): one test of a set, executed once (with retries) against
 *   the set's variables.
 * - executor: the code that runs one kind of test: `http`, `command`,
 *   `playwright`, and one per test framework.
 * - worker: a process's loop of slots that claims WAITING members from the
 *   store and hands them to executors.
 * - slot: one member (or one Playwright worker of a batch) running at a time.
 * - lease: a claim's right to run a member until a time judged by the store's
 *   clock; every write under it is fenced by (workerId, claim).
 * - batch: members of one set that may run in one executor call: the cases of
 *   one Playwright or framework entry.
 * - share: the part of a batch one worker takes at once, sized by expected time.
 * - suite version: an uploaded suite, named by the SHA-256 of its archive; a
 *   set may run one instead of the server's own tests. Code names it (and its
 *   id) `suiteVersion`: `store.suiteVersions`, `ClaimedRun.suiteVersion`,
 *   `NewTestRunSet.suiteVersion`, `SetAsk.suiteVersion`; only what users and
 *   older workers see still says `suite`: the API, the CLI, the worker
 *   protocol and the store's `suite` column.
 * - suite cache: a worker's suite versions, fetched, checked, unpacked and
 *   installed (`--suite-cache`, src/suites/cache.ts).
 * - store: where sets, members, keys, history, webhooks and artifact metadata
 *   live: a SQLite file or PostgreSQL.
 * - artifact: a file kept for a member (screenshot, trace, video).
 */
import type { Counts, RunState } from './states.js';
import type { MemberRules } from './moves.js';
import type { RestartReason } from './starts.js';

// ── Tests, as declared in runset.config.yaml and frozen into each member (./test-specs.ts) ──

import type { TestSpec, TestType } from './test-specs.js';
export type { CommandTestSpec, FrameworkCase, FrameworkName, FrameworkTestSpec, HttpTestSpec, PlaywrightCase, PlaywrightTestSpec, TestCommon, TestSpec, TestType } from './test-specs.js';
export { FRAMEWORKS } from './test-specs.js';

// ── Environments and their variables ────────────────────────────────────────

/**
 * A variable's value as kept in config and store. Secret values are never held
 * in clear outside the process that uses them: `env` refs are read from the
 * process environment at use, `sealed` values are encrypted at rest.
 */
export type VariableValue =
  | { kind: 'plain'; value: string }
  | { kind: 'env'; name: string }
  | { kind: 'sealed'; box: string }
  /** A secret value in clear, opened by the API for a worker over HTTP: only in a claim's answer, never stored. */
  | { kind: 'opened'; value: string };

export interface EnvironmentConfig {
  name: string;
  variables: Record<string, VariableValue>;
  /** Fail fast: once this many members failed, the rest of the set is cancelled. Null: off. */
  maxFailures: number | null;
  /** A member that passed only after a retry fails the set (failsSet, src/core/moves.ts). */
  failOnFlaky: boolean;
  /** How many of its sets may run at once; later ones wait (WAITING, members unclaimed) in creation order. Null: no limit. */
  maxConcurrentSets: number | null;
  /** How long a set may take from its creation (queue time included) before it is cancelled (src/core/deadlines.ts). */
  setTimeoutSeconds: number;
  /** Its http tests may reach private addresses (never link-local or metadata ones). */
  allowPrivateTargets: boolean;
  /** A set of it may run an uploaded suite version (src/core/suites.ts) rather than the config's own tests. */
  allowSuiteUploads: boolean;
  /** Variables that accept only some override values, by name (src/sets/override-rules.ts); others accept any. */
  overrideRules: Readonly<Record<string, OverrideRule>>;
}

/** The override values a variable accepts: any matching one of the globs or the pattern (each on the whole value). */
export interface OverrideRule {
  allow: readonly string[];
  /** A regular expression, or null. */
  pattern: string | null;
}

// ── Stored records ──────────────────────────────────────────────────────────

/** Who ended a set early, and why: a key (cancel) or fail fast (by null). */
export interface Cancellation {
  at: string;
  /** The key's id and name; null when fail fast cancelled it. */
  byKeyId: string | null;
  byKeyName: string | null;
  /** The error its cancelled members got: `cancelled`, or `cancelled: maxFailures N reached`. */
  error: string;
}

/** A set's control settings and state, apart from its status (which the hot status GET reads alone). */
export interface SetControl {
  maxFailures: number | null;
  cancellation: Cancellation | null;
}

/**
 * Where a queued set stands: its environment's maxConcurrentSets is taken by
 * unfinished sets created before it (src/store/queue.ts).
 */
export interface QueuePlace {
  /** How many sets must end before this one starts (1: it is next). */
  ahead: number;
  /** The environment's maxConcurrentSets when the set was created. */
  limit: number;
  /** The sets holding the environment's places now, oldest first. */
  holders: string[];
}

export interface TestRunSetRecord {
  id: string;
  env: string;
  status: RunState;
  counts: Counts;
  /** How many member ends fail the set (failsSet, src/core/moves.ts): FAIL once all ended and this is above 0. */
  failing: number;
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
  /** Executions of the test within its last start (1 + its framework's retries used). */
  attempts: number;
  /** How many times it was started (moved to RUNNING): more than 1 when a start of it was lost (./starts.ts). */
  starts: number;
  /** One per start after the first: why the start before it was lost (restartsOf, ./starts.ts). */
  restarts: RestartReason[];
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  error: string | null;
  output: string | null;
  /** The worker that ran (or runs) its last attempt: set when the member starts, kept after it ends. */
  workerId: string | null;
  /**
   * The worker holding it while it is still WAITING: it took the member with its
   * batch (the share's test process is starting) or is preparing its suite
   * version. Null while nobody holds it (it waits for a slot) and once it starts.
   */
  heldBy: string | null;
  /** Ended SUCCESS because Playwright skipped it (declared or at run time): nothing of it ran. Always false for other types. */
  skipped: boolean;
  /** Its test was quarantined when the set was planned: its end does not fail the set (failsSet). */
  quarantined: boolean;
  /** How long it was expected to take when the set was created (see src/scheduler/shares.ts). */
  expectedMs: number | null;
  /** The cases its result holds (a command's JUnit report, `junit:`), in report order; none for other tests. */
  cases: ResultCase[];
}

/** One case inside a member's result, as a report the test wrote tells it (a `<testcase>` of JUnit XML). */
export interface ResultCase {
  /** `classname › name`, or the name alone when the report gives no class. */
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  durationMs: number;
  /** The first lines of its failure or error message; null when it did not fail. */
  error: string | null;
}

/** A member to store; its rules (MemberRules) decide whether its end fails the set. */
export interface NewTestRun extends MemberRules {
  id: string;
  /** Display order: the order of the suite's config. */
  position: number;
  spec: TestSpec;
  /** Expected duration from this test's history; members are claimed longest expected first. */
  expectedMs: number;
}

/** One successful run's duration, for the test's history (what expected durations come from). */
export interface DurationSample {
  env: string;
  name: string;
  ms: number;
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
  /** The environment's maxFailures when the set was created (a later config change does not move it). */
  maxFailures: number | null;
  /** The environment's maxConcurrentSets when the set was created; null or absent: it never waits for other sets. */
  maxConcurrentSets?: number | null;
  /** Its deadline, counted from createdAt (src/core/deadlines.ts); null or absent: none (a set stored before deadlines). */
  timeoutSeconds?: number | null;
  /** Its concurrency group: once created, it supersedes the group's older unfinished sets of its environment (src/sets/supersede.ts). */
  concurrencyGroup?: string | null;
  /** CI context the client sent (commit, branch, pipeline…); `{}` when none. */
  labels: Record<string, string>;
  /** The suite version the set runs (src/core/suites.ts); null or absent: the server's own config. Stored in the set's `suite` column. */
  suiteVersion?: string | null;
  /** Which of the environment's tests the set was asked to run (src/sets/select.ts); null or absent: all of them. */
  select?: TestSelection | null;
  runs: NewTestRun[];
}

/**
 * A selection of tests on create (`select`): each field given narrows the set,
 * the fields AND together. Matched by src/sets/select.ts.
 */
export interface TestSelection {
  /** Tests with any of these tags (a leading `@` ignored on both sides). */
  tags?: string[];
  /** A regular expression the test's name (as members show it) must match. */
  grep?: string;
  /** A regular expression the test's name must not match. */
  grepInvert?: string;
  /** Exact test names, as members show them. */
  names?: string[];
  /** Playwright projects: only Playwright cases of these projects. */
  projects?: string[];
}

/** A member handed to a worker: what to run, and the lease that fences its writes. */
export interface ClaimedRun {
  id: string;
  setId: string;
  /** The set's environment: where the member's duration history is kept. */
  env: string;
  spec: TestSpec;
  /** Expected duration (see NewTestRun.expectedMs). */
  expectedMs: number;
  variables: Record<string, VariableValue>;
  /** Fencing token: bumped by every claim; every later write must carry it. */
  claim: number;
  workerId: string;
  /**
   * Members of one set with the same batch key run in one executor call. Such a
   * member is claimed *reserved*: leased, but still WAITING until it begins.
   */
  batchKey: string | null;
  /** The suite version its set runs (src/core/suites.ts): its spec's paths are under VERSION_ROOT. Null or absent: the server's own config. The worker protocol calls it `suite`. */
  suiteVersion?: string | null;
  /** Claimed over HTTP: the lease's ticket, which every write under the lease sends back (LeaseRef.token). */
  leaseToken?: string;
}

export interface RunOutcome {
  status: 'SUCCESS' | 'FAIL';
  attempts: number;
  error: string | null;
  output: string;
  durationMs: number;
  /** Passed because its executor skipped it (a Playwright case's test.skip or test.fixme); absent: false. Only with SUCCESS. */
  skipped?: boolean;
  /** Artifacts whose bytes are already stored; recorded with the outcome, under the same lease. */
  artifacts?: NewArtifact[];
  /** The cases of its result (a command's JUnit report); absent: none. */
  cases?: ResultCase[];
}

/** An artifact about to be recorded: its bytes are at `location` in the artifact blob store. */
export interface NewArtifact {
  id: string;
  name: string;
  contentType: string;
  size: number;
  location: string;
}

export interface ArtifactRecord extends NewArtifact {
  runId: string;
  setId: string;
  createdAt: string;
}

// ── Executors ───────────────────────────────────────────────────────────────

export interface ExecutionContext {
  /** Resolved variables, secret ones in clear: never log them. */
  variables: Readonly<Record<string, string>>;
  /** Aborted on timeout, lost lease or shutdown: the executor must stop and clean up. */
  signal: AbortSignal;
  /** Where the member's own requests may go (http tests); absent: DEFAULT_OUTBOUND_POLICY of src/net/outbound.ts. */
  outbound?: OutboundPolicy;
  /** The OS user this member's processes run as (its slot's, under --run-as); absent: the executor's policy's. */
  runAs?: OsUser;
}

/** An OS user test processes run as (src/executors/run-as.ts). */
export interface OsUser {
  name: string;
  uid: number;
  gid: number;
  /** Supplementary groups, the primary one left out. */
  groups: readonly number[];
  home: string;
}

/** The outbound address rules an environment chose (src/net/outbound.ts applies them). */
export interface OutboundPolicy {
  /** Private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) allowed; link-local and metadata never are. */
  allowPrivateTargets: boolean;
}

export interface ExecutionResult {
  passed: boolean;
  /** One line saying why it failed; null when passed. */
  error: string | null;
  /** Captured output (the executor keeps at most the last 64 KiB). */
  output: string;
  /** Passed without running: the executor skipped it (only Playwright does: test.skip, test.fixme). Absent: false. */
  skipped?: boolean;
  /** The cases a report the test wrote holds (a command's `junit:` files); absent: none. */
  cases?: ResultCase[];
  /** Files it left to keep as the member's artifacts (a command's `artifacts:`); absent: none. */
  artifacts?: readonly ArtifactFile[];
}

export interface Executor<S extends TestSpec = TestSpec> {
  readonly type: S['type'];
  run(spec: S, ctx: ExecutionContext): Promise<ExecutionResult>;
  /** Runs several members at once (those of one batch key); see BatchExecutionContext. */
  runBatch?(specs: S[], ctx: BatchExecutionContext): Promise<void>;
}

/** A file an executor produced for a member (screenshot, trace, video…). */
export interface ArtifactFile {
  name: string;
  contentType: string;
  /** Absolute path (in the batch's work folder, or where the test wrote it): read only as the test could (src/artifacts/take.ts). */
  path: string;
}

/** How one member of a batch ended. */
export interface CaseResult extends ExecutionResult {
  /** Executions, retries included. */
  attempts: number;
  durationMs: number;
  artifacts: ArtifactFile[];
  /**
   * Not run to an end through no fault of its own (another case hung and the
   * batch was killed): the worker gives it back to WAITING instead of failing it.
   */
  interrupted?: boolean;
  /** The executor's worker slot its last attempt ran in (Playwright's parallelIndex), 0-based; undefined when unknown. */
  lane?: number;
}

/**
 * A batch run: the executor reports each member's start and end as they happen
 * (by index into `specs`), so counts move live. It must call `onEnd` once for
 * every member before its promise resolves, unless `signal` was aborted.
 */
export interface BatchExecutionContext extends ExecutionContext {
  /** An empty folder the batch owns (outputs, traces); removed by the worker afterwards. */
  workDir: string;
  /** Worker slots the batch was given: how many members it may run at once. */
  parallelism: number;
  /** `lane`: the executor's worker slot the attempt runs in (Playwright's parallelIndex), 0-based, when known. */
  onBegin(index: number, attempt: number, lane?: number): void;
  onEnd(index: number, result: CaseResult): void;
}
