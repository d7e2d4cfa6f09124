/**
 * runset's MCP server: tools, resources and prompts over a RunsetClient. The
 * same server runs over stdio (`runset mcp`, src/cli/mcp.ts) and over
 * Streamable HTTP on the API (/api/mcp, src/api/routes/mcp.ts); only the
 * client's key and transport differ.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { McpDeps } from './context.js';
import { registerPrompts } from './prompts.js';
import { registerResources } from './resources.js';
import { registerControlTools } from './tools-control.js';
import { registerReadTools } from './tools-read.js';
import { registerRunTools } from './tools-run.js';

export type { McpDeps } from './context.js';

const INSTRUCTIONS =
  'runset runs end-to-end tests (HTTP checks, Playwright, test commands and frameworks) on a server, in named environments. ' +
  'Start with list_environments; trigger_set runs tests and waits; get_set_result explains failures (error, output, Playwright error context, history, flakiness); ' +
  'rerun_failures and repeat_test check a fix. What a key may not do is refused with the API\'s problem.';

/** One for every server: the SDK would build an Ajv per server (a third of a server's making), for what runset never asks (elicitation). */
const VALIDATOR = new AjvJsonSchemaValidator();

export function createRunsetMcpServer(deps: McpDeps): McpServer {
  const server = new McpServer({ name: 'runset', version: deps.version }, { instructions: INSTRUCTIONS, capabilities: { logging: {} }, jsonSchemaValidator: VALIDATOR });
  registerReadTools(server, deps);
  registerRunTools(server, deps);
  registerControlTools(server, deps);
  registerResources(server, deps);
  registerPrompts(server);
  return server;
}
