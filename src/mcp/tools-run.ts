/**
 * The tools that start sets: trigger (and wait), wait again, rerun only the
 * failures, and run one test N times to check a fix. Each needs a key whose
 * role may trigger in that environment; the API refuses the others and the tool
 * answers with its problem.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CreateTestRunSetBody } from '../client/types.js';
import type { McpDeps } from './context.js';
import { answer, describeFailure, guarded, refusal } from './results.js';
import { SetOutcome } from './schemas.js';
import { setOutcome } from './set-result.js';
import { timeoutNote, WAIT_DEFAULT_SECONDS, WAIT_MAX_SECONDS, waitForSet, waitForSets, type Extra } from './waiting.js';

const Wait = z.boolean().default(true).describe('Wait for the set to end (progress notifications while it runs); false: answer at once with its id');
const Timeout = z
  .number()
  .int()
  .min(1)
  .max(WAIT_MAX_SECONDS)
  .default(WAIT_DEFAULT_SECONDS)
  .describe(`How long to wait, in seconds (default ${WAIT_DEFAULT_SECONDS}, at most ${WAIT_MAX_SECONDS}); the set goes on after it`);
const Overrides = z.record(z.string(), z.string()).optional().describe("Values for the environment's declared variables (list_environments names them); secret values are masked in every answer");
const Selection = z
  .object({
    tags: z.array(z.string()).optional(),
    grep: z.string().optional().describe('A JavaScript regular expression the test name must match'),
    grepInvert: z.string().optional(),
    names: z.array(z.string()).optional().describe('Exact test names'),
    projects: z.array(z.string()).optional().describe('Playwright projects'),
  })
  .optional()
  .describe("Run only some of the environment's tests (fields AND together)");

// Built once (a server is made per HTTP request): see tools-read.ts.
const TriggerIn = {
  env: z.string().describe('The environment (list_environments)'),
  envOverride: Overrides,
  select: Selection,
  labels: z.record(z.string(), z.string()).optional().describe('Labels for the set, e.g. {"branch": "fix-login"}'),
  suite: z.string().optional().describe('An uploaded suite version id or name to run instead of the server’s own tests'),
  wait: Wait,
  timeoutSeconds: Timeout,
};
/** `runset mcp` only: a local folder. */
const TriggerLocalIn = { ...TriggerIn, suiteDir: z.string().optional().describe('A local folder holding runset.config.yaml: uploaded, then run (runs that version of the tests)') };
const WaitIn = { setId: z.string().describe('The set id (uuid)'), timeoutSeconds: Timeout };
const RerunIn = { setId: z.string().describe('The ended set whose failures to run again'), wait: Wait, timeoutSeconds: Timeout };
const RepeatIn = {
  env: z.string(),
  name: z.string().describe("The test's exact name, as members show it"),
  times: z.number().int().min(1).max(20).default(5).describe('How many runs (1-20, default 5)'),
  envOverride: Overrides,
  timeoutSeconds: Timeout,
};
const RepeatOut = {
  env: z.string(),
  name: z.string(),
  times: z.number(),
  passed: z.number(),
  failed: z.number(),
  unfinished: z.number().describe('Sets still running when the time ran out'),
  errors: z.array(z.string()).describe('Distinct errors of the failed runs (first lines, at most 3)'),
  sets: z.array(z.object({ setId: z.string(), status: z.string() })),
};

/** After a create: the outcome at once, or after waiting for it. */
async function settle(deps: McpDeps, id: string, wait: boolean, timeoutSeconds: number, extra: Extra) {
  if (!wait) return answer(await setOutcome(deps.client, await deps.client.getTestRunSet(id), 'not waited for: call wait_for_set with its setId'));
  const { status, timedOut } = await waitForSet(deps.client, id, timeoutSeconds, extra);
  const outcome = await setOutcome(deps.client, status, timedOut ? timeoutNote(timeoutSeconds) : status.status === 'FAIL' ? 'call get_set_result for the errors' : undefined);
  return answer(outcome, `Set ${outcome.setId}: ${outcome.status}${outcome.finished ? '' : ' (still running)'}.`);
}

export function registerRunTools(server: McpServer, deps: McpDeps): void {
  const { client } = deps;
  server.registerTool(
    'trigger_set',
    {
      title: 'Run tests (trigger a test run set)',
      description:
        "Starts a test run set of an environment's tests on the runset server and, by default, waits for it to end, sending progress notifications. " +
        `Optional: variable overrides, a selection of tests, labels, and ${deps.pushSuite ? 'suiteDir (a local folder with a runset.config.yaml, uploaded first) or ' : ''}suite (an uploaded version id or name). ` +
        'Costs real test time on shared machines (seconds to many minutes): prefer a selection when you only need some tests. Needs a key that may trigger.',
      inputSchema: deps.pushSuite ? TriggerLocalIn : TriggerIn,
      outputSchema: SetOutcome.shape,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (input, extra) =>
      guarded(async () => {
        const { env, envOverride, select, labels, wait, timeoutSeconds } = input;
        const suiteDir = (input as { suiteDir?: string }).suiteDir;
        if (suiteDir !== undefined && input.suite !== undefined) return refusal('give suite or suiteDir, not both');
        const suite = suiteDir !== undefined && deps.pushSuite ? await deps.pushSuite(suiteDir) : input.suite;
        const body: CreateTestRunSetBody = { env, ...(envOverride ? { envOverride } : {}), ...(select ? { select } : {}), ...(labels ? { labels } : {}), ...(suite ? { suite } : {}) };
        const { testRunSetId } = await client.createTestRunSet(body, { idempotencyKey: randomUUID() });
        return settle(deps, testRunSetId, wait, timeoutSeconds, extra);
      }),
  );

  server.registerTool(
    'wait_for_set',
    {
      title: 'Wait for a test run set',
      description: 'Waits until a set ends (SUCCESS or FAIL) or the timeout passes, sending progress notifications; answers with its status, counts and failed test names. Costs only waiting time.',
      inputSchema: WaitIn,
      outputSchema: SetOutcome.shape,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ setId, timeoutSeconds }, extra) => guarded(() => settle(deps, setId, true, timeoutSeconds, extra)),
  );

  server.registerTool(
    'rerun_failures',
    {
      title: 'Rerun only the failures of a set',
      description:
        'Starts a new set with the same environment, overrides and selection as an ended set, holding only its members that failed (labelled rerun-of), and by default waits for it. Use it to check a fix without running everything again. Needs a key that may trigger.',
      inputSchema: RerunIn,
      outputSchema: SetOutcome.shape,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ setId, wait, timeoutSeconds }, extra) =>
      guarded(async () => {
        const { testRunSetId } = await client.rerunTestRunSet(setId, { only: 'failed' });
        return settle(deps, testRunSetId, wait, timeoutSeconds, extra);
      }),
  );

  registerRepeatTool(server, client);
}

/** One test N times: how a fix for a flaky test is checked. */
function registerRepeatTool(server: McpServer, client: McpDeps['client']): void {
  server.registerTool(
    'repeat_test',
    {
      title: 'Run one test N times',
      description:
        'Runs one test by its exact name N times (N sets of that test alone, queued by the environment’s limits) and reports how many passed: use it to check a fix for a flaky test. Costs N runs of the test. Needs a key that may trigger.',
      inputSchema: RepeatIn,
      outputSchema: RepeatOut,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ env, name, times, envOverride, timeoutSeconds }, extra) =>
      guarded(async () => {
        const body: CreateTestRunSetBody = { env, select: { names: [name] }, labels: { purpose: 'repeat-test' }, ...(envOverride ? { envOverride } : {}) };
        const ids: string[] = [];
        try {
          for (let i = 0; i < times; i++) ids.push((await client.createTestRunSet(body, { idempotencyKey: randomUUID() })).testRunSetId);
        } catch (error) {
          // Those already created run anyway: say which, so the agent can wait for or cancel them.
          if (ids.length === 0) throw error;
          return refusal(`${describeFailure(error)}; ${ids.length} of ${times} sets were created before and run: ${ids.join(', ')}`);
        }
        const ended = await waitForSets(client, ids, timeoutSeconds, extra);
        const failedIds = ended.filter((e) => e.status.status === 'FAIL').map((e) => e.status.id);
        const errors = new Set<string>();
        for (const id of failedIds.slice(0, 3)) for (const run of (await client.listTestRuns(id)) ?? []) if (run.error) errors.add(run.error.split('\n')[0]!.slice(0, 300));
        const passed = ended.filter((e) => e.status.status === 'SUCCESS').length;
        const data = { env, name, times, passed, failed: failedIds.length, unfinished: times - passed - failedIds.length, errors: [...errors].slice(0, 3), sets: ended.map((e) => ({ setId: e.status.id, status: e.status.status })) };
        return answer(data, `${name}: ${passed} of ${times} runs passed.`);
      }),
  );
}
