/**
 * `runset mcp`: runset's MCP server over stdio, the way coding agents (Claude
 * Code, Cursor, VS Code) start local servers. It is a client of the runset API
 * (RUNSET_URL, RUNSET_API_KEY, like `trigger`): the same key, role and
 * environments, never the store. stdout carries the protocol only; notes go to
 * stderr. It runs until the agent closes its stdin.
 */
import type { Command } from 'commander';
import type { TriggerEnv } from '../client/trigger-context.js';

export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('serve runset to a coding agent as an MCP server over stdio (needs RUNSET_URL and RUNSET_API_KEY)')
    .action(async () => {
      process.exitCode = await runMcp(process.env);
    });
}

export async function runMcp(env: TriggerEnv): Promise<number> {
  const [{ connectFromEnv }, { EXIT_CODES, TriggerFailure }, { createRunsetMcpServer }, { StdioServerTransport }, { VERSION }] = await Promise.all([
    import('../client/connect.js'),
    import('../client/trigger-context.js'),
    import('../mcp/server.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('../core/version.js'),
  ]);
  let client;
  try {
    client = connectFromEnv(env, { userAgent: `runset-mcp/${VERSION}` });
  } catch (error) {
    if (!(error instanceof TriggerFailure)) throw error;
    process.stderr.write(`runset: error: ${error.message}\n`);
    return EXIT_CODES.error;
  }
  const pushSuite = async (dir: string): Promise<string> => {
    const { pushSuite: push } = await import('./suite-push.js');
    return (await push(client, { dir }, env, process.stderr)).id;
  };
  const server = createRunsetMcpServer({ client, version: VERSION, pushSuite });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await server.connect(transport);
  // The agent ends the server by closing our stdin.
  process.stdin.once('end', () => void server.close());
  await closed;
  return 0;
}
