/**
 * The output shapes of the tools (zod: the MCP SDK turns them into the JSON
 * Schemas it announces and checks structured content against them). Shared
 * pieces live here; each tool file declares its own input.
 */
import { z } from 'zod';

export const Counts = z.object({ WAITING: z.number(), RUNNING: z.number(), SUCCESS: z.number(), FAIL: z.number() });

/** A set as a tool reports it after creating or waiting for it. */
export const SetOutcome = z.object({
  setId: z.string(),
  status: z.string().describe('WAITING, RUNNING, SUCCESS or FAIL'),
  finished: z.boolean().describe('SUCCESS or FAIL: it will not change any more'),
  counts: Counts,
  url: z.string().describe("The set's dashboard page"),
  failed: z.array(z.string()).describe('Names of the members that ended FAIL (the first 20)'),
  note: z.string().optional().describe('What to do next, e.g. when the wait ran out'),
});
export type SetOutcome = z.infer<typeof SetOutcome>;

export const History = z.object({
  runs: z.number().describe('Ended, not cancelled runs among the last 50 in this environment'),
  passRate: z.number().nullable(),
  flakyRate: z.number().nullable().describe('Share of runs that passed only after a retry, or flipped on the same commit'),
  failedBefore: z.number().describe('Failed runs of this test in other sets, among the last 50'),
  lastFailureBefore: z.object({ setId: z.string(), endedAt: z.string(), error: z.string().nullable() }).nullable(),
});

export const Failure = z.object({
  testRunId: z.string(),
  name: z.string(),
  type: z.string(),
  attempts: z.number(),
  ranAgain: z
    .string()
    .nullable()
    .describe('Why it ran more than once, when it did: each restart after a lost lease or worker, then each retry of its last start (null: it ran once)'),
  error: z.string().nullable(),
  output: z.string().nullable().describe('The first lines of its output tail (secrets masked)'),
  errorContext: z.string().nullable().describe("Playwright's error context (page snapshot at the failure), when it left one"),
  errorContextResource: z.string().nullable().describe('The resource URI of the whole error context'),
  artifacts: z
    .array(z.object({ name: z.string(), contentType: z.string(), size: z.number(), url: z.string(), viewer: z.string().optional().describe("A trace: opens in the dashboard's trace viewer, for a person signed in") }))
    .describe('Trace, screenshot, video…: GET the url with the same Bearer key'),
  quarantined: z.boolean().describe('Quarantined when the set was created: its failure did not fail the set'),
  quarantinedNow: z.boolean().describe('A quarantine is in force now'),
  history: History.nullable(),
});
export type Failure = z.infer<typeof Failure>;

export const SetResult = z.object({
  setId: z.string(),
  env: z.string().nullable(),
  status: z.string(),
  counts: Counts,
  createdAt: z.string(),
  endedAt: z.string().nullable(),
  url: z.string(),
  failuresTotal: z.number(),
  failures: z.array(Failure),
  note: z.string().optional(),
});
export type SetResult = z.infer<typeof SetResult>;
