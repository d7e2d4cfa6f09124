/**
 * The reading tools: environments, recent sets, a set's result and a test's
 * history. None changes anything, so any key that sees the environment may
 * call them (the API decides).
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { setPageUrl } from '../client/links.js';
import { BOUNDS } from './bounds.js';
import type { McpDeps } from './context.js';
import { answer, guarded } from './results.js';
import { Counts, History, SetResult } from './schemas.js';
import { readSetResult, testHistory } from './set-result.js';

/** List items carry their environment (an extension the status document lacks). */
function envOf(set: object): string | null {
  const env = (set as { env?: unknown }).env;
  return typeof env === 'string' ? env : null;
}

const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

// Built once: the HTTP endpoint makes a server per request, and building zod schemas is most of its cost (bench:mcp).
const EnvironmentsOut = {
  environments: z.array(
    z.object({
      name: z.string(),
      tests: z.number(),
      variables: z.array(z.object({ name: z.string(), secret: z.boolean(), value: z.string().nullable(), accepts: z.string().nullable() })),
    }),
  ),
};
const SetsIn = {
  env: z.string().optional().describe('Only sets of this environment'),
  labels: z.record(z.string(), z.string()).optional().describe('Only sets carrying all these labels'),
  limit: z.number().int().min(1).max(20).default(10).describe('How many (1-20, default 10)'),
};
const SetsOut = {
  sets: z.array(z.object({ setId: z.string(), env: z.string().nullable(), status: z.string(), counts: Counts, createdAt: z.string(), endedAt: z.string().nullable(), url: z.string() })),
};
const ResultIn = {
  setId: z.string().describe('The set id (uuid), from trigger_set or list_sets'),
  offset: z.number().int().min(0).default(0).describe('Skip this many failures (paging)'),
  limit: z.number().int().min(1).max(BOUNDS.failuresMax).default(BOUNDS.failuresDefault).describe(`Failures to detail (1-${BOUNDS.failuresMax})`),
  errorContext: z.boolean().default(true).describe("Include Playwright's error context text (false: only its resource URI)"),
};
const HistoryIn = {
  env: z.string().describe('The environment'),
  name: z.string().describe("The test's exact name, as members show it"),
};
const HistoryOut = {
  env: z.string(),
  name: z.string(),
  known: z.boolean().describe('false: no ended run of this test in this environment yet'),
  history: History.omit({ failedBefore: true, lastFailureBefore: true })
    .extend({
      lastOutcomes: z.array(z.object({ setId: z.string(), result: z.string(), flaky: z.boolean(), cancelled: z.boolean(), endedAt: z.string() })),
      lastFailure: z.object({ setId: z.string(), endedAt: z.string(), error: z.string().nullable() }).nullable(),
    })
    .nullable(),
  quarantine: z.object({ reason: z.string(), until: z.string() }).nullable(),
};

export function registerReadTools(server: McpServer, { client }: McpDeps): void {
  server.registerTool(
    'list_environments',
    {
      title: 'List environments',
      description:
        'Lists the runset environments this key may use, how many tests each runs, and its declared variables (the only names trigger_set may override; a secret variable shows no value). Call it first to learn what env names and overrides exist. One cheap request.',
      outputSchema: EnvironmentsOut,
      annotations: READ_ONLY,
    },
    () => guarded(async () => answer({ environments: await client.listEnvironments() })),
  );

  server.registerTool(
    'list_sets',
    {
      title: 'List recent test run sets',
      description:
        'Lists the newest test run sets (newest first), optionally of one environment or carrying given labels (e.g. {"branch": "main"}), with status and counts. Use it to find the set a CI run started, or the last failing one. One cheap request.',
      inputSchema: SetsIn,
      outputSchema: SetsOut,
      annotations: READ_ONLY,
    },
    ({ env, labels, limit }) =>
      guarded(async () => {
        const sets = await client.listTestRunSets({ ...(env ? { env } : {}), ...(labels ? { labels } : {}), limit });
        return answer({
          sets: sets.map((s) => ({
            setId: s.id,
            env: envOf(s),
            status: s.status,
            counts: s.progress.counts,
            createdAt: s.createdAt,
            endedAt: s.endedAt,
            url: setPageUrl(client.url, s.id),
          })),
        });
      }),
  );

  registerResultTools(server, client);
}

/** A set's result and a test's history: what explains a failure. */
function registerResultTools(server: McpServer, client: McpDeps['client']): void {
  server.registerTool(
    'get_set_result',
    {
      title: "Read a set's result and its failures",
      description:
        "Reads a test run set's result: its counts and, for each failed member, the test name, its error, the first lines of its output, Playwright's error context (the page at the failure), links to its trace and screenshot, whether it failed before in this environment, its flaky rate and quarantine. " +
        `Use it after a set ends FAIL to understand why. Details ${BOUNDS.failuresDefault} failures per call by default (page with offset); texts are cut with a note. A few requests per failure.`,
      inputSchema: ResultIn,
      outputSchema: SetResult.shape,
      annotations: READ_ONLY,
    },
    ({ setId, offset, limit, errorContext }) =>
      guarded(async () => {
        const result = await readSetResult(client, setId, { offset, limit, errorContext });
        return answer(result, `Set ${result.setId}: ${result.status}, ${result.counts.SUCCESS} passed, ${result.counts.FAIL} failed.`);
      }),
  );

  server.registerTool(
    'get_test_history',
    {
      title: "Read a test's history and flakiness",
      description:
        "Reads one test's recent history in an environment: its last outcomes (newest first), pass rate, flaky rate (passed only after a retry, or failed and passed on the same commit), its last failure, and whether it is quarantined now. Use it to judge whether a failure is new or a known flaky test. Two cheap requests.",
      inputSchema: HistoryIn,
      outputSchema: HistoryOut,
      annotations: READ_ONLY,
    },
    ({ env, name }) =>
      guarded(async () => {
        const [summary, quarantine] = await Promise.all([testHistory(client, env, name), client.listQuarantine(env)]);
        const entry = quarantine.find((q) => q.name === name);
        const history = summary && {
          runs: summary.runs,
          passRate: summary.passRate,
          flakyRate: summary.flakyRate,
          lastOutcomes: summary.lastOutcomes.slice(0, BOUNDS.outcomes).map((o) => ({ setId: o.setId, result: o.result, flaky: o.flaky, cancelled: o.cancelled, endedAt: o.endedAt })),
          lastFailure: summary.lastFailure && { setId: summary.lastFailure.setId, endedAt: summary.lastFailure.endedAt, error: summary.lastFailure.error },
        };
        return answer({ env, name, known: summary !== null, history, quarantine: entry ? { reason: entry.reason, until: entry.until } : null });
      }),
  );
}
