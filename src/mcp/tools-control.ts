/**
 * The tools that change what runs: cancel a set, quarantine a test or end its
 * quarantine. The API decides who may (quarantine needs a key whose role
 * allows it in that environment); a refusal comes back as the API's problem.
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { McpDeps } from './context.js';
import { answer, guarded } from './results.js';
import { Counts } from './schemas.js';

// Built once (a server is made per HTTP request): see tools-read.ts.
const SetIdIn = { setId: z.string() };
const CancelOut = { setId: z.string(), status: z.string(), cancelled: z.boolean(), counts: Counts };
const QuarantineIn = {
  env: z.string(),
  name: z.string().describe("The test's exact name"),
  reason: z.string().min(1).describe('Why, for the people who read the quarantine list (e.g. an issue link)'),
  until: z.string().optional().describe("An ISO time when it ends; absent: the server's default"),
};
const UnquarantineIn = { env: z.string(), name: z.string() };
const UnquarantineOut = { env: z.string(), name: z.string(), quarantined: z.literal(false) };
const QuarantineShape = { env: z.string(), name: z.string(), reason: z.string(), until: z.string(), created: z.boolean(), knownTest: z.boolean() };

export function registerControlTools(server: McpServer, { client }: McpDeps): void {
  server.registerTool(
    'cancel_set',
    {
      title: 'Cancel a test run set',
      description: 'Cancels a set: its unfinished members end FAIL with the error "cancelled", and so does the set. Use it to stop a set you no longer need. cancelled is false when it had already ended (nothing changed).',
      inputSchema: SetIdIn,
      outputSchema: CancelOut,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ setId }) =>
      guarded(async () => {
        const result = await client.cancelTestRunSet(setId);
        return answer({ setId: result.id, status: result.status, cancelled: result.cancelled, counts: result.progress.counts });
      }),
  );

  server.registerTool(
    'quarantine_test',
    {
      title: 'Quarantine a test',
      description:
        "Quarantines a test in an environment: it still runs, but its failure no longer fails a set, until the given time (or the server's default). Use it for a known flaky test while it is being fixed, with a reason people will read. Needs a key that may quarantine.",
      inputSchema: QuarantineIn,
      outputSchema: QuarantineShape,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    ({ env, name, reason, until }) =>
      guarded(async () => {
        const result = await client.addQuarantine({ env, name, reason, ...(until ? { until } : {}) });
        const { entry } = result;
        return answer({ env: entry.env, name: entry.name, reason: entry.reason, until: entry.until, created: result.created, knownTest: result.knownTest });
      }),
  );

  server.registerTool(
    'unquarantine_test',
    {
      title: "End a test's quarantine",
      description: "Ends a test's quarantine now: its failures fail sets again. Use it once a fix is verified (repeat_test). Needs a key that may quarantine.",
      inputSchema: UnquarantineIn,
      outputSchema: UnquarantineOut,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ env, name }) =>
      guarded(async () => {
        await client.removeQuarantine(env, name);
        return answer({ env, name, quarantined: false });
      }),
  );
}
