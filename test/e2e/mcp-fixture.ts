/**
 * What the MCP tests share: a suite with a passing test and a failing one that
 * prints an override's (secret) value and leaves an error-context.md (the file
 * Playwright writes at a failure, kept by `artifacts:`), a real `serve`, keys of
 * role trigger (the bootstrap admin) and read, and MCP clients of the SDK over
 * stdio (`runset mcp`) and over HTTP (/api/mcp).
 */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { api, CLI, startRunset, type RunningServer } from '../helpers/server.js';

export const TOOLS = ['cancel_set', 'get_set_result', 'get_test_history', 'list_environments', 'list_sets', 'quarantine_test', 'repeat_test', 'rerun_failures', 'trigger_set', 'unquarantine_test', 'wait_for_set'];

export interface Outcome { setId: string; status: string; finished: boolean; counts: Record<string, number>; failed: string[]; url: string }
export interface Failure { name: string; error: string | null; output: string | null; errorContext: string | null; errorContextResource: string | null; artifacts: Array<{ name: string; url: string }>; history: { failedBefore: number; runs: number } | null }
export interface SetResult { setId: string; status: string; failuresTotal: number; failures: Failure[]; counts: Record<string, number> }

export const CONFIG_SECRET = 'config-secret-mcp-never-shown';
export const OVERRIDE_SECRET = 'override-secret-mcp-never-shown';

const BREAKS = `
const fs = require('node:fs');
fs.writeFileSync('error-context.md', '# Page snapshot\\n\\n- heading "Sign in" [level=1]\\n- button "Submit" [disabled]\\n');
console.log('token is ' + process.env.TOKEN);
for (let i = 1; i <= 80; i++) console.log('log line ' + i);
console.error('expected status 200, got 500');
process.exit(1);
`;

export const MCP_CONFIG = `
environments:
  staging:
    variables:
      GREETING: hello
      TOKEN: \${env:MCP_TOKEN}
  preview:
    allowSuiteUploads: true
tests:
  - name: passes
    type: command
    run: [node, -e, "process.exit(0)"]
    environments: [staging]
  - name: breaks
    type: command
    run: [node, breaks.cjs]
    artifacts: ["error-context.md"]
    environments: [staging]
  - name: slow
    type: command
    run: [node, -e, "setTimeout(() => {}, 60000)"]
    environments: [preview]
`;

/** A suite folder an agent has checked out: \`trigger_set\` with suiteDir uploads and runs it (runset mcp only). */
export const LOCAL_SUITE = {
  'runset.config.yaml': 'tests:\n  - { name: from the folder, type: command, run: [node, -e, "console.log(\'from the folder\')"] }\n',
};

/** A `serve` of MCP_CONFIG with a `read` key; `options` add flags (a PostgreSQL store) and variables (a shared RUNSET_SECRET_KEY). */
export async function startMcpServer(options: { args?: string[]; env?: Record<string, string>; apiKey?: string } = {}): Promise<{ server: RunningServer; readKey: string }> {
  const server = await startRunset({
    config: MCP_CONFIG,
    env: { MCP_TOKEN: CONFIG_SECRET, ...options.env },
    files: { 'breaks.cjs': BREAKS },
    args: options.args ?? ['--workers', '2'],
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
  });
  const made = await api<{ token: string }>(server, 'POST', '/v0/keys', { body: { name: 'agent reads', role: 'read' } });
  assert.equal(made.status, 201, made.text);
  return { server, readKey: made.body.token };
}

/** `runset mcp` as an agent starts it: RUNSET_URL and RUNSET_API_KEY in its environment, the protocol on its stdio. */
export async function stdioClient(server: RunningServer, apiKey: string): Promise<Client> {
  const env = { PATH: process.env.PATH ?? '', RUNSET_URL: server.url, RUNSET_API_KEY: apiKey };
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env, stderr: 'pipe' });
  const client = new Client({ name: 'runset-test-agent', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

export async function httpClient(server: RunningServer, apiKey: string, fetch?: FetchLike): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } }, ...(fetch ? { fetch } : {}) });
  const client = new Client({ name: 'runset-test-agent', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** Every text an agent received, to check no secret is in any of them. */
export class Transcript {
  readonly texts: string[] = [];

  async call(client: Client, name: string, args: Record<string, unknown>, onprogress?: (p: { progress: number; total?: number; message?: string }) => void): Promise<CallToolResult> {
    const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000, ...(onprogress ? { onprogress } : {}) })) as CallToolResult;
    this.texts.push(JSON.stringify(result));
    return result;
  }

  record(value: unknown): void {
    this.texts.push(JSON.stringify(value));
  }

  assertNoSecret(secrets: readonly string[]): void {
    assert.ok(this.texts.length > 0);
    for (const text of this.texts) for (const secret of secrets) assert.ok(!text.includes(secret), `a result holds a secret: ${text.slice(0, 200)}`);
  }
}

export function structured<T = Record<string, unknown>>(result: CallToolResult): T {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  assert.ok(result.structuredContent, 'structured content');
  return result.structuredContent as T;
}

export function errorText(result: CallToolResult): string {
  assert.equal(result.isError, true, `expected a refusal, got ${JSON.stringify(result.structuredContent)}`);
  const first = result.content[0];
  assert.ok(first && first.type === 'text');
  return first.text;
}
