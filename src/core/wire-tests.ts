/**
 * Wire shapes of test history (GET /api/v0/tests, /api/v0/tests/history), as
 * TypeBox schemas: validation, serialisation, the OpenAPI document and the
 * dashboard's Tests page take them from here. What flaky, rates and cancelled
 * mean: src/history/flakiness.ts.
 */
import type { Static } from 'typebox';
import { Type } from './typebox.js';
import { DateTime, LIMITS, NullableDateTime, refTo, Uuid } from './wire.js';

export const TEST_PAGE_LIMIT = Object.freeze({ default: 20, max: 100 });
export const HISTORY_PAGE_LIMIT = Object.freeze({ default: 50, max: 100 });

const Env = Type.String({ minLength: 1, maxLength: LIMITS.envNameLength, description: 'The environment (required): a configured one this key may see.' });
const Limit = (limit: { default: number; max: number }, what: string) =>
  Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: `${what} per page, 1-${limit.max} (default ${limit.default}).` }));
const Cursor = Type.Optional(Type.String({ minLength: 1, maxLength: 8192, description: 'The nextCursor of the previous page.' }));

export const ListTestsQuery = Type.Object(
  {
    env: Env,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Only tests whose name contains this (ASCII letters in any case).' })),
    limit: Limit(TEST_PAGE_LIMIT, 'Tests'),
    cursor: Cursor,
  },
  { additionalProperties: false },
);
export type ListTestsQuery = Static<typeof ListTestsQuery>;

export const TestHistoryQuery = Type.Object(
  {
    env: Env,
    name: Type.String({ minLength: 1, maxLength: 1024, description: "The test's exact name (required)." }),
    limit: Limit(HISTORY_PAGE_LIMIT, 'Runs'),
    cursor: Cursor,
  },
  { additionalProperties: false },
);
export type TestHistoryQuery = Static<typeof TestHistoryQuery>;

/**
 * An enum rather than a union of literals: the same JSON Schema meaning, but
 * fast-json-stringify writes it without running a validator to pick a branch,
 * and a tests page holds a thousand of them.
 */
const Result = Type.Unsafe<'SUCCESS' | 'FAIL'>({ type: 'string', enum: ['SUCCESS', 'FAIL'], description: "The member's final status." });
const Cancelled = Type.Boolean({ description: 'Ended by a cancel (its error is `cancelled…`): shown, but left out of runs, rates, durations and lastFailure.' });
const Restarted = Type.Boolean({
  description: 'Started more than once because a start was lost (its lease expired while it ran, or its worker gave it back): its test ran again. Counted apart from retries; not flaky by itself.',
});
const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const TestOutcome = Type.Object(
  {
    setId: Uuid,
    testRunId: Uuid,
    result: Result,
    flaky: Type.Boolean({ description: 'Passed only after a retry, or failed and passed on the same commit label within these runs (both of the pair). A restart alone is not flaky.' }),
    restarted: Restarted,
    cancelled: Cancelled,
    endedAt: DateTime,
  },
  { additionalProperties: false, $id: 'TestOutcome' },
);

export const TestSummary = Type.Object(
  {
    name: Type.String(),
    type: Type.String({ description: 'Executor kind of its newest run: http, command, playwright, vitest, jest, mocha, cucumber, pytest, newman; junit for a case of a command JUnit report (junit:).' }),
    lastOutcomes: Type.Array(refTo(TestOutcome), { description: 'Its last 50 ended runs in this environment, newest first.' }),
    runs: Type.Integer({ minimum: 0, description: 'How many of lastOutcomes the figures count: all but the cancelled ones.' }),
    passRate: NullableNumber('SUCCESS runs / runs, 0-1; null when runs is 0.'),
    flakyRate: NullableNumber('Flaky runs / runs, 0-1; null when runs is 0. A run that passed on a later start after a lost lease or worker is not flaky: see restartRate.'),
    restartRate: NullableNumber('Restarted runs / runs, 0-1 (started more than once because a start was lost: counted apart from retries); null when runs is 0.'),
    durationMs: Type.Object(
      { median: NullableNumber('Median duration of the counted runs (ms).'), p95: NullableNumber('95th percentile (nearest rank, ms).') },
      { additionalProperties: false },
    ),
    lastFailure: Type.Union(
      [
        Type.Object(
          { setId: Uuid, testRunId: Uuid, endedAt: DateTime, error: NullableString('First line of its error.') },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The newest failed (not cancelled) run among lastOutcomes; null when none failed.' },
    ),
  },
  { additionalProperties: false, $id: 'TestSummary' },
);
export type TestSummary = Static<typeof TestSummary>;

export const TestList = Type.Object(
  {
    environment: Type.String(),
    tests: Type.Array(refTo(TestSummary), { description: 'Tests with an ended run in the environment, by name (byte order of UTF-8).' }),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as ?cursor= for the next page; null on the last one.' }),
  },
  { additionalProperties: false, $id: 'TestList' },
);
export type TestList = Static<typeof TestList>;

export const TestHistoryRun = Type.Object(
  {
    setId: Uuid,
    testRunId: Uuid,
    labels: Type.Record(Type.String(), Type.String(), { description: "The set's labels (commit, branch…); {} when none." }),
    result: Result,
    attempts: Type.Integer({ minimum: 0, description: 'Executions within its last start: 1 + retries used (0: it never started).' }),
    starts: Type.Integer({ minimum: 0, description: 'How many times it was started: more than 1 when a start was lost (its lease expired, or its worker gave it back) and it ran again. A case of a JUnit report: 1.' }),
    durationMs: Type.Union([Type.Integer(), Type.Null()]),
    startedAt: NullableDateTime,
    endedAt: DateTime,
    error: NullableString('First line of its error; null when it passed.'),
    cancelled: Cancelled,
  },
  { additionalProperties: false, $id: 'TestHistoryRun' },
);

export const TestHistory = Type.Object(
  {
    environment: Type.String(),
    name: Type.String(),
    runs: Type.Array(refTo(TestHistoryRun), { description: 'Ended runs, newest first (endedAt, then testRunId).' }),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as ?cursor= for the next page; null on the last one.' }),
  },
  { additionalProperties: false, $id: 'TestHistory' },
);
export type TestHistory = Static<typeof TestHistory>;
