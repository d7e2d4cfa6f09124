/**
 * Resources an agent can attach: a set's summary (markdown) and a member's
 * Playwright error context. Read through the API with the caller's key, like
 * every tool; a refusal becomes a protocol error carrying the API's problem.
 */
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { BOUNDS, clip } from './bounds.js';
import type { McpDeps } from './context.js';
import { describeFailure } from './results.js';
import type { SetResult } from './schemas.js';
import { errorContextArtifact, readSetResult } from './set-result.js';

function one(value: string | string[] | undefined): string {
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

async function refusedAs<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof McpError) throw error;
    throw new McpError(ErrorCode.InvalidParams, describeFailure(error));
  }
}

export function summaryMarkdown(result: SetResult): string {
  const c = result.counts;
  const lines = [`# Test run set ${result.setId}`, '', `- environment: ${result.env ?? 'unknown'}`, `- status: ${result.status}`, `- passed ${c.SUCCESS}, failed ${c.FAIL}, running ${c.RUNNING}, waiting ${c.WAITING}`, `- page: ${result.url}`];
  for (const f of result.failures) {
    lines.push('', `## FAIL ${f.name} (${f.type}, ${f.attempts} attempt${f.attempts === 1 ? '' : 's'})`);
    if (f.quarantined) lines.push('', 'Quarantined: this failure did not fail the set.');
    if (f.error) lines.push('', '```', f.error, '```');
    if (f.history) lines.push('', `History: ${f.history.failedBefore} earlier failure(s) in the last ${f.history.runs} runs; flaky rate ${f.history.flakyRate ?? 'n/a'}.`);
    if (f.errorContextResource) lines.push(`Error context: ${f.errorContextResource}`);
    for (const a of f.artifacts) lines.push(`- ${a.name}: ${a.url}`);
  }
  if (result.note) lines.push('', result.note);
  return lines.join('\n');
}

export function registerResources(server: McpServer, { client }: McpDeps): void {
  server.registerResource(
    'set-summary',
    new ResourceTemplate('runset://sets/{setId}/summary', { list: undefined }),
    { title: "A test run set's summary", description: 'Status, counts and each failure (error, history, artifact links) as markdown.', mimeType: 'text/markdown' },
    (uri, variables) =>
      refusedAs(async () => {
        const result = await readSetResult(client, one(variables.setId), { offset: 0, limit: BOUNDS.failuresMax, errorContext: false });
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: summaryMarkdown(result) }] };
      }),
  );

  server.registerResource(
    'error-context',
    new ResourceTemplate('runset://sets/{setId}/test-runs/{testRunId}/error-context', { list: undefined }),
    { title: "A failed Playwright test's error context", description: 'The page snapshot Playwright wrote at the failure (markdown).', mimeType: 'text/markdown' },
    (uri, variables) =>
      refusedAs(async () => {
        const testRunId = one(variables.testRunId);
        const runs = (await client.listTestRuns(one(variables.setId))) ?? [];
        const file = runs.find((r) => r.id === testRunId);
        const artifact = file && errorContextArtifact(file);
        if (!artifact) throw new McpError(ErrorCode.InvalidParams, `no error context for test run ${testRunId} in set ${one(variables.setId)}: only failed Playwright tests leave one`);
        const text = await client.readArtifactText(artifact.url);
        return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: clip(text, BOUNDS.errorContextResourceChars).text }] };
      }),
  );
}
