/**
 * POST /api/mcp — runset's MCP server over Streamable HTTP, for agents that
 * connect to a remote server. Stateless: each request gets its own server and
 * transport (no session id), so any API process may answer any request.
 *
 * Authority: the tools are a RunsetClient holding the caller's own Bearer key,
 * whose requests this app answers itself (./local-fetch.ts), through the very
 * hooks and routes every client goes through: a key's role and environments
 * are judged exactly as for the CLI, and secret values stay masked. Links in
 * its answers start at --public-url, else at the address the agent called
 * (the client's address is for links only: its requests never leave). The key is
 * checked here first too, so a missing or bad key is a plain 401 (what MCP
 * clients expect of an HTTP server) rather than a failing tool.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { RunsetClient } from '../../client/client.js';
import type { AppDeps } from '../deps.js';
import { requireKey } from '../auth.js';
import { localFetch } from '../local-fetch.js';
import { OPENAPI_INFO } from './openapi.js';
import { tokenOf } from '../../auth/keys.js';

/**
 * The MCP SDK, its schemas and runset's tools, loaded at the first MCP request:
 * a third of a second of every API start that serves no agent.
 */
let loading: Promise<[typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js'), typeof import('../../mcp/server.js')]> | undefined;
function loadMcp() {
  loading ??= Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'), import('../../mcp/server.js')]);
  return loading;
}

export const mcpRoutes: FastifyPluginAsync<{ deps: AppDeps; root: FastifyInstance }> = (app, { deps, root }) => {
  const fetch = localFetch(root, deps.publicUrl ? new URL(deps.publicUrl).pathname.replace(/\/+$/, '') : '');
  app.post(
    '/mcp',
    {
      onRequest: requireKey(deps.auth),
      // JSON-RPC, not REST: OpenAPI cannot describe it; docs/guides/ci.md does ("Coding agents (MCP)").
      schema: { hide: true },
    },
    async (request, reply) => {
      const apiKey = tokenOf(request.headers.authorization)!;
      const base = deps.publicUrl ?? `${request.protocol}://${request.host}`;
      const [{ StreamableHTTPServerTransport }, { createRunsetMcpServer }] = await loadMcp();
      const client = new RunsetClient({ url: `${base}/api`, apiKey, fetch, userAgent: 'runset-mcp-http' });
      const server = createRunsetMcpServer({ client, version: OPENAPI_INFO.info.version });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      reply.hijack();
      // A waiting tool answers as an event stream: a buffering proxy would hold its progress back.
      reply.raw.setHeader('x-accel-buffering', 'no');
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );
  return Promise.resolve();
};
