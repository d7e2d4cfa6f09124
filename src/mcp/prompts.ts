/**
 * Prompt templates that chain the tools for the two questions agents ask most:
 * why did this set fail, and is this test flaky.
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

function user(text: string) {
  return { messages: [{ role: 'user' as const, content: { type: 'text' as const, text } }] };
}

const WhyArgs = { setId: z.string().describe('The failed set id') };
const FlakyArgs = { env: z.string().describe('The environment'), name: z.string().describe("The test's exact name") };

export function registerPrompts(server: McpServer): void {
  server.registerPrompt(
    'why_did_set_fail',
    { title: 'Why did this set fail?', description: "Investigate a failed runset test run set and propose a fix.", argsSchema: WhyArgs },
    ({ setId }) =>
      user(
        [
          `Find out why runset test run set ${setId} failed.`,
          `1. Call get_set_result with setId ${setId}. For each failure read its error, the first lines of its output and, for Playwright tests, its errorContext (the page at the failure; read the resource runset://sets/${setId}/test-runs/<testRunId>/error-context for the whole of it).`,
          '2. Look at each failure\'s history: failedBefore and flakyRate tell a new breakage from a known flaky test; quarantined ones did not fail the set.',
          '3. Say, per failure, the most likely cause (the product, the test, or the environment) with the evidence, and propose a fix.',
          `4. After a fix, call rerun_failures with setId ${setId} to check it; for a suspected flaky test, call repeat_test.`,
        ].join('\n'),
      ),
  );

  server.registerPrompt(
    'is_test_flaky',
    {
      title: 'Is this test flaky?',
      description: 'Judge whether a test is flaky from its history, and confirm by running it several times.',
      argsSchema: FlakyArgs,
    },
    ({ env, name }) =>
      user(
        [
          `Decide whether the test "${name}" in runset environment ${env} is flaky.`,
          `1. Call get_test_history with env ${env} and name "${name}": look at flakyRate, passRate, the pattern of lastOutcomes and its last failure's error.`,
          `2. If the history is not conclusive, call repeat_test with env ${env}, name "${name}" and times 5 (it costs five runs of the test), and compare passed with times.`,
          '3. Answer flaky, broken or healthy, with the figures. If flaky and not yet quarantined, say whether quarantine_test (with a reason) is worth it while it is fixed.',
        ].join('\n'),
      ),
  );
}
