/**
 * The wire shapes of the HTTP API, as TypeBox schemas: the server validates and
 * serialises with them, the OpenAPI document is generated from them, and the
 * client SDK derives its types from them — one source, nothing to drift.
 * Seed shapes (interface 0.1.0) are marked; everything else is an extension.
 */
import type { Static, TSchema, TUnsafe } from 'typebox';
import { Type } from './typebox.js';
import { RUN_STATES } from './states.js';
import { MAX_LOST_STARTS_KEPT, RESTART_REASONS } from './starts.js';
import type { TestRunSetRecord } from './types.js';

export const LIMITS = Object.freeze({
  bodyBytes: 1024 * 1024,
  envNameLength: 128,
  overrideCount: 100,
  overrideKeyLength: 256,
  overrideValueLength: 64 * 1024,
  labelCount: 20,
  labelValueLength: 256,
  /** `select` (TestSelection): list lengths and item lengths, and a regular expression's length. */
  selectListCount: 100,
  selectTagLength: 128,
  selectNameCount: 1000,
  selectNameLength: 1024,
  selectPatternLength: 256,
});

/**
 * A reference to a named schema (by its `$id`), typed as the schema itself. The
 * server registers every named schema once (SHARED_SCHEMAS, src/api/routes/common.ts),
 * so each is one component of the OpenAPI document, referenced wherever it is used.
 */
export function refTo<T extends TSchema>(schema: T, options: { description?: string } = {}): TUnsafe<Static<T>> {
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id !== 'string') throw new Error('refTo(): the schema needs an $id');
  return Type.Unsafe<Static<T>>({ $ref: `${id}#`, ...options });
}

/** A label's key: what `?label=key:value` filters on. */
export const LABEL_KEY = '^[a-z0-9_.-]{1,64}$';

export const Uuid = Type.String({ format: 'uuid' });
export const DateTime = Type.String({ format: 'date-time' });
/**
 * `type: ["string", "null"]` rather than anyOf: the same JSON Schema meaning (and
 * OpenAPI 3.1 form), but fast-json-stringify serialises it without running a
 * validator per field — this sits on the status GET, the hot path.
 */
export const NullableDateTime = Type.Unsafe<string | null>({ type: ['string', 'null'], format: 'date-time' });
export const RunStateSchema = Type.Union(
  [
    Type.Literal(RUN_STATES[0]),
    Type.Literal(RUN_STATES[1]),
    Type.Literal(RUN_STATES[2]),
    Type.Literal(RUN_STATES[3]),
  ],
  { description: `One of ${RUN_STATES.join(', ')}.` },
);

const selectList = (count: number, length: number, description: string) =>
  Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: length }), { minItems: 1, maxItems: count, description }));
const selectPattern = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.selectPatternLength, description }));

/** Extension — which of the environment's tests a set runs (src/sets/select.ts). */
export const TestSelectionSchema = Type.Object(
  {
    tags: selectList(LIMITS.selectListCount, LIMITS.selectTagLength, 'Tests with any of these tags: a test\'s `tags` in the config, a Playwright case\'s own tags (`@smoke` in its title, or `tag:`) and its entry\'s. A leading "@" is ignored.'),
    grep: selectPattern('A JavaScript regular expression the test\'s name (as its member shows it) must match; at most 256 characters.'),
    grepInvert: selectPattern('A JavaScript regular expression the test\'s name must not match; at most 256 characters.'),
    names: selectList(LIMITS.selectNameCount, LIMITS.selectNameLength, 'Exact test names, as members show them.'),
    projects: selectList(LIMITS.selectListCount, LIMITS.selectTagLength, 'Playwright projects: only Playwright cases of one of these projects (tests of other types have none).'),
  },
  {
    additionalProperties: false,
    $id: 'TestSelection',
    description: 'Each field given narrows the set; the fields AND together. A selection that matches none of the environment\'s tests is 422 no_tests_selected.',
  },
);
export type TestSelectionBody = Static<typeof TestSelectionSchema>;

/** Seed 2.1 — the creation config. */
export const CreateTestRunSetBody = Type.Object(
  {
    env: Type.String({
      minLength: 1,
      maxLength: LIMITS.envNameLength,
      description: 'Name of the environment the set runs against.',
    }),
    envOverride: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: LIMITS.overrideKeyLength }), Type.String({ maxLength: LIMITS.overrideValueLength }), {
        maxProperties: LIMITS.overrideCount,
        description: "Replacement values for the environment's declared variables.",
      }),
    ),
    labels: Type.Optional(
      Type.Record(Type.String({ pattern: LABEL_KEY }), Type.String({ maxLength: LIMITS.labelValueLength }), {
        maxProperties: LIMITS.labelCount,
        additionalProperties: false,
        description:
          'Extension: where the set comes from (CI context such as commit, branch, pr, pipeline, actor). At most 20; keys of 1-64 a-z, 0-9, "_", "." and "-"; values of at most 256 characters.',
      }),
    ),
    suite: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description:
          "Extension: run an uploaded suite version (its id, or a name published with `runset suites push --name`) instead of the server's own tests. The environment must set allowSuiteUploads: true.",
      }),
    ),
    select: Type.Optional(refTo(TestSelectionSchema, { description: "Extension: run only some of the environment's tests (by tag, name pattern, exact name, Playwright project)." })),
    concurrencyGroup: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: LIMITS.labelValueLength,
        description:
          "Extension: a new set of a group cancels the group's older unfinished sets of the same environment (queued or running), whose unfinished members end FAIL with `superseded by <new id>` (GitHub Actions' cancel-in-progress). Any text of 1-256 characters, as a label value.",
      }),
    ),
    timeoutSeconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 604_800,
        description:
          "Extension: the set's deadline in seconds from its creation, queue time included; at most the environment's setTimeout (default 60m, which is also the default here). A set not ended by then is cancelled, its unfinished members ending FAIL with `set timeout 60m reached`.",
      }),
    ),
  },
  { additionalProperties: false, $id: 'CreateTestRunSetBody' },
);
export type CreateTestRunSetBody = Static<typeof CreateTestRunSetBody>;

/** Seed 2.2 — the creation result. */
export const CreateTestRunSetResult = Type.Object(
  { testRunSetId: Uuid },
  { additionalProperties: false, $id: 'CreateTestRunSetResult' },
);
export type CreateTestRunSetResult = Static<typeof CreateTestRunSetResult>;

export const CountsSchema = Type.Object(
  {
    WAITING: Type.Integer({ minimum: 0 }),
    RUNNING: Type.Integer({ minimum: 0 }),
    SUCCESS: Type.Integer({ minimum: 0 }),
    FAIL: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

/** Seed 2.3 — TestRunSetStatus. Every field is always present; nullable ones as null. */
export const TestRunSetStatus = Type.Object(
  {
    id: Uuid,
    status: RunStateSchema,
    startedAt: NullableDateTime,
    endedAt: NullableDateTime,
    createdAt: DateTime,
    progress: Type.Object({ counts: CountsSchema }, { additionalProperties: false }),
  },
  { additionalProperties: false, $id: 'TestRunSetStatus' },
);
export type TestRunSetStatus = Static<typeof TestRunSetStatus>;

/** A set's status document: the seed's `GET /v0/test-run-sets/{id}` body (also what webhooks carry). */
export function statusDocument(set: TestRunSetRecord): TestRunSetStatus {
  return {
    id: set.id,
    status: set.status,
    startedAt: set.startedAt,
    endedAt: set.endedAt,
    createdAt: set.createdAt,
    progress: { counts: set.counts },
  };
}

/** Extension — a file kept for a member (a failure's screenshot, Playwright trace, video). */
export const ArtifactSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String({ description: 'File name, e.g. screenshot.png, trace.zip, trace-retry1.zip.' }),
    contentType: Type.String(),
    size: Type.Integer({ minimum: 0, description: 'Bytes.' }),
    url: Type.String({ description: 'Where to GET it (same credentials as the API): /api/v0/artifacts/{id}.' }),
  },
  { additionalProperties: false },
);
export type Artifact = Static<typeof ArtifactSchema>;

/** Extension — one member of a set. */
export const TestRunSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    type: Type.String({ description: 'Executor kind: http, command, …' }),
    status: RunStateSchema,
    attempts: Type.Integer({
      minimum: 0,
      description: "Executions within its last start: 1 + the test framework's own retries (a `retry`). A run started again after a lost start begins again at 1: see starts.",
    }),
    starts: Type.Integer({
      minimum: 0,
      description:
        'How many times it was started (0: not yet). runset runs a member at least once: a start cut short (its lease expired while it ran, or its worker gave it back after it had begun) is started again, so its test may have run more than once. A member reserved by a worker that never began is not started.',
    }),
    restarts: Type.Array(Type.Union([Type.Literal(RESTART_REASONS[0]), Type.Literal(RESTART_REASONS[1])]), {
      description:
        "One per start after the first, in order: why the start before it was lost. `lease lost`: its lease expired while it ran, and the reaper put it back; `worker lost`: its worker gave it back after it had begun (a drain, a shutdown). A pass after a restart alone is not flaky; a pass after a `retry` (attempts above 1) is. The first 100 are kept; `starts` counts every start.",
      maxItems: MAX_LOST_STARTS_KEPT,
    }),
    startedAt: NullableDateTime,
    endedAt: NullableDateTime,
    durationMs: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()], { description: 'One-line reason of a failure.' }),
    output: Type.Union([Type.String(), Type.Null()], { description: 'Captured output tail, secrets masked.' }),
    flaky: Type.Boolean({ description: "Passed, but only after a retry of its test framework within its last start (attempts above 1); a pass on a later start after a lost lease or worker is not flaky (see restarts)." }),
    skipped: Type.Boolean({
      description: 'Passed because its framework skipped it (Playwright test.skip or test.fixme, Vitest or Jest test.skip or test.todo): its status is SUCCESS, but nothing of it ran. Always false for http and command tests.',
    }),
    quarantined: Type.Boolean({
      description:
        'Its test was quarantined in the environment when the set was created (runset quarantine add): it ran, its status is its real one, but its failure (or a pass after a retry under failOnFlaky) does not fail the set.',
    }),
    workerId: Type.Union([Type.String(), Type.Null()], {
      description: 'The worker process that started its last attempt (see GET /api/v0/workers); null until it starts.',
    }),
    heldBy: Type.Union([Type.String(), Type.Null()], {
      description:
        'The worker process holding it while it is still WAITING: it took the member with the rest of its batch and its test process (Playwright, a framework) is starting, or it prepares the set\'s suite version. Null while nobody holds it (it waits for a free slot) and once it has started (see workerId).',
    }),
    expectedMs: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'How long it was expected to take when the set was created: the median of its recent successful runs in this environment. Members are claimed longest expected first.',
    }),
    cancelledBy: Type.Union([Type.Object({ keyId: Type.String(), keyName: Type.String() }, { additionalProperties: false }), Type.Null()], {
      description: 'The key whose cancel ended this member; null when none did (it ran to its end, or fail fast stopped it: see error).',
    }),
    artifacts: Type.Array(ArtifactSchema, { description: 'Files kept for this member: screenshot, trace and video of a failure.' }),
    cases: Type.Array(
      Type.Object(
        {
          name: Type.String({ description: '`classname › name` of a JUnit <testcase>, or its name alone.' }),
          status: Type.Union([Type.Literal('passed'), Type.Literal('failed'), Type.Literal('skipped')]),
          durationMs: Type.Integer({ minimum: 0 }),
          error: Type.Union([Type.String(), Type.Null()], { description: 'The first lines of its failure; null unless it failed.' }),
        },
        { additionalProperties: false },
      ),
      { description: "The cases of its result: each <testcase> of the JUnit XML a command entry with junit: wrote, in report order. Empty for other tests." },
    ),
  },
  { additionalProperties: false, $id: 'TestRun' },
);
export type TestRun = Static<typeof TestRunSchema>;

export const TestRunList = Type.Object(
  { testRuns: Type.Array(refTo(TestRunSchema)) },
  { additionalProperties: false, $id: 'TestRunList' },
);
export type TestRunList = Static<typeof TestRunList>;


/** RFC 9457 problem details, with runset's stable `code`. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
  },
  { $id: 'Problem' },
);
export type ProblemBody = Static<typeof ProblemSchema>;

/** GET /api/health: can this process read its store? */
export const HealthSchema = Type.Object(
  { status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]) },
  { additionalProperties: false, $id: 'Health' },
);
