/**
 * Wire shapes of the dashboard's API extensions, as TypeBox schemas (validation,
 * serialisation and the OpenAPI document come from them, and the dashboard's
 * page code takes its types from them). None of them changes a seed shape: the
 * list items carry the seed status fields plus `env`.
 */
import type { Static } from 'typebox';
import { Type } from './typebox.js';
import { CountsSchema, DateTime, LIMITS, NullableDateTime, refTo, RunStateSchema, TestSelectionSchema, Uuid } from './wire.js';
import { CancellationView } from './wire-control.js';
import { KeyEnvsSchema, KeyRoleSchema } from './wire-keys.js';
import { SetSuiteView } from './wire-suites.js';

export const SET_PAGE_LIMIT = Object.freeze({ default: 20, max: 100 });

const LabelFilter = Type.String({ minLength: 3, maxLength: 64 + 1 + LIMITS.labelValueLength, description: 'key:value, such as branch:main' });

export const ListTestRunSetsQuery = Type.Object(
  {
    env: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.envNameLength, description: 'Only sets of this environment.' })),
    status: Type.Optional(RunStateSchema),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: `Sets per page, 1-${SET_PAGE_LIMIT.max} (default ${SET_PAGE_LIMIT.default}).` })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'The nextCursor of the previous page.' })),
    label: Type.Optional(
      Type.Union([LabelFilter, Type.Array(LabelFilter, { maxItems: LIMITS.labelCount })], {
        description: 'Only sets carrying this label, as key:value (such as branch:main); repeat for several (all must match).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListTestRunSetsQuery = Static<typeof ListTestRunSetsQuery>;

export const TestRunSetSummary = Type.Object(
  {
    id: Uuid,
    env: Type.String(),
    status: RunStateSchema,
    startedAt: NullableDateTime,
    endedAt: NullableDateTime,
    createdAt: DateTime,
    progress: Type.Object({ counts: CountsSchema }, { additionalProperties: false }),
  },
  { additionalProperties: false, $id: 'TestRunSetSummary' },
);
export type TestRunSetSummary = Static<typeof TestRunSetSummary>;

export const TestRunSetPage = Type.Object(
  {
    testRunSets: Type.Array(refTo(TestRunSetSummary), { description: 'Newest first (createdAt, then id).' }),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as ?cursor= for the next page; null on the last one.' }),
  },
  { additionalProperties: false, $id: 'TestRunSetPage' },
);
export type TestRunSetPage = Static<typeof TestRunSetPage>;

export const OverrideView = Type.Object(
  {
    name: Type.String(),
    value: Type.String({ description: 'The value sent, or "***" for a secret variable.' }),
    secret: Type.Boolean(),
  },
  { additionalProperties: false },
);
export type OverrideView = Static<typeof OverrideView>;

/** Where a set waits in its environment's queue (maxConcurrentSets). */
export const QueueView = Type.Object(
  {
    ahead: Type.Integer({ minimum: 1, description: 'How many sets must end before this one starts (1: it is next).' }),
    limit: Type.Integer({ minimum: 1, description: "The environment's maxConcurrentSets when the set was created." }),
    holders: Type.Array(Uuid, { description: "The sets holding the environment's places now (running, or about to), oldest first: what the set waits for." }),
  },
  { additionalProperties: false, $id: 'QueuePlace' },
);
export type QueueView = Static<typeof QueueView>;

export const TestRunSetDetails = Type.Object(
  {
    id: Uuid,
    env: Type.String(),
    overrides: Type.Array(OverrideView, { description: 'The envOverride the set was created with; secret values masked.' }),
    maxFailures: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "The environment's fail-fast limit when the set was created; null: off." }),
    cancellation: Type.Union([refTo(CancellationView), Type.Null()], { description: 'Who ended the set early, when, and the error its members got; null when nobody did.' }),
    labels: Type.Record(Type.String(), Type.String(), { description: 'The labels the set was created with (CI context); {} when none.' }),
    suite: Type.Union([refTo(SetSuiteView), Type.Null()], { description: 'The uploaded suite version the set runs (its id, the names pointing at it now, its commit); null: the server\'s own tests.' }),
    select: Type.Union([refTo(TestSelectionSchema), Type.Null()], { description: 'The selection the set was created with (and run again with); null: every test of its environment.' }),
    queue: Type.Union([refTo(QueueView), Type.Null()], {
      description: "Where the set waits in its environment's queue (the environment's maxConcurrentSets is taken by sets created before it); null when it is not queued: it may run, or it has ended.",
    }),
    phase: Type.Union([Type.Literal('queued'), Type.Literal('waiting'), Type.Literal('preparing'), Type.Literal('running'), Type.Literal('ended')], {
      description:
        'Where the set stands, beside its status: `queued` behind its environment\'s limit; `preparing` while a worker holds members none of which has begun (it fetches the suite version and installs its dependencies, starts the test process and its webServer; the members stay WAITING); `waiting` for a worker; `running` once a member began; `ended`.',
    }),
    held: Type.Array(Type.Object({ workerId: Type.String(), members: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }), {
      description: 'Members a worker has claimed and not begun, by worker (GET /api/v0/workers): what it is preparing, or the rest of its share. [] when none.',
    }),
    failing: Type.Integer({
      minimum: 0,
      description:
        "How many of its members' ends fail the set: a FAIL of a test not quarantined, a cancel, a pass after a retry where the environment has failOnFlaky. The set ends FAIL when this is above 0, so a SUCCESS set's FAIL members were all quarantined, and a FAIL set without FAIL members failed on failOnFlaky.",
    }),
  },
  { additionalProperties: false, $id: 'TestRunSetDetails' },
);
export type TestRunSetDetails = Static<typeof TestRunSetDetails>;

export const VariableView = Type.Object(
  {
    name: Type.String(),
    secret: Type.Boolean({ description: 'Read from ${env:…}: its value is never sent.' }),
    value: Type.Union([Type.String(), Type.Null()], { description: 'The configured value of a plain variable; null for a secret one.' }),
    accepts: Type.Union([Type.String(), Type.Null()], {
      description: 'The override values it accepts, when the config constrains them (allow globs, pattern), in words; null: any value.',
    }),
  },
  { additionalProperties: false },
);
export type VariableView = Static<typeof VariableView>;

export const EnvironmentList = Type.Object(
  {
    environments: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          tests: Type.Integer({ minimum: 0, description: 'How many tests a set of this environment runs.' }),
          variables: Type.Array(VariableView, { description: 'Declared variables: the only keys envOverride accepts.' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, $id: 'EnvironmentList' },
);
export type EnvironmentList = Static<typeof EnvironmentList>;
export type EnvironmentView = EnvironmentList['environments'][number];

export const SignInBody = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 256, description: 'An API key (rs_…); surrounding spaces and a "Bearer " prefix are ignored.' }) },
  { additionalProperties: false, $id: 'SignInBody' },
);
export type SignInBody = Static<typeof SignInBody>;

export const SessionInfo = Type.Object(
  {
    key: Type.Object(
      {
        id: Type.String(),
        name: Type.String(),
        role: KeyRoleSchema,
        envs: KeyEnvsSchema,
        expiresAt: NullableDateTime,
      },
      { additionalProperties: false },
    ),
    operations: Type.Array(Type.String(), { description: 'The operationIds this key may call: the dashboard shows only what it may use.' }),
    csrfToken: Type.String({ description: 'Send as X-CSRF-Token on every request that changes something.' }),
    expiresAt: DateTime,
  },
  { additionalProperties: false, $id: 'SessionInfo' },
);
export type SessionInfo = Static<typeof SessionInfo>;

export const RunningMemberView = Type.Object(
  {
    setId: Uuid,
    runId: Uuid,
    name: Type.String(),
    type: Type.String({ description: 'Executor kind: http, command, playwright, vitest, jest, mocha, cucumber, pytest, newman.' }),
    startedAt: NullableDateTime,
  },
  { additionalProperties: false },
);

export const WorkerView = Type.Object(
  {
    id: Type.String({ description: "The worker process's id; members name it in workerId." }),
    host: Type.String(),
    pid: Type.Integer(),
    slots: Type.Integer({ minimum: 0, description: 'Members it may run at once (--workers).' }),
    startedAt: DateTime,
    heartbeatAt: DateTime,
    running: Type.Array(RunningMemberView, { description: 'Members it has begun and not yet ended, oldest start first.' }),
    held: Type.Integer({ minimum: 0, description: 'Members leased to it that it has not begun: the rest of its share.' }),
  },
  { additionalProperties: false, $id: 'Worker' },
);
export type WorkerView = Static<typeof WorkerView>;

export const WorkerList = Type.Object(
  {
    workers: Type.Array(refTo(WorkerView), { description: 'Live worker processes, by host, then start.' }),
    staleAfterMs: Type.Integer({ minimum: 0, description: 'A worker silent for longer than this is no longer listed (nor given a share).' }),
  },
  { additionalProperties: false, $id: 'WorkerList' },
);
export type WorkerList = Static<typeof WorkerList>;

/** The optional body of "run again" (POST /test-run-sets/{id}/rerun): none runs every test again. */
export const RerunTestRunSetBody = Type.Object(
  {
    only: Type.Optional(
      Type.Literal('failed', {
        description:
          'Run again only the members that ended FAIL (cancelled ones included), matched by name; the new set carries the label rerun-of: <earlier id>. 422 nothing_to_rerun when none failed; 409 rerun_conflict while the earlier set has not ended or when a failed test is no longer planned.',
      }),
    ),
  },
  { additionalProperties: false, $id: 'RerunTestRunSetBody' },
);
export type RerunTestRunSetBody = Static<typeof RerunTestRunSetBody>;
