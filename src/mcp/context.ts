/**
 * What runset's MCP server is built from: a RunsetClient holding the caller's
 * key (every tool is a client of the HTTP API, so roles and environments are
 * judged by the API exactly as for the CLI), and what only a local process can
 * do (upload a suite from a folder).
 */
import type { RunsetClient } from '../client/client.js';

export interface McpDeps {
  client: RunsetClient;
  /** runset's version, announced to the agent. */
  version: string;
  /**
   * Uploads the suite in a local folder (its runset.config.yaml) and resolves
   * with the version's id. Only `runset mcp` has local folders: over HTTP it is
   * absent and trigger_set says so.
   */
  pushSuite?: (dir: string) => Promise<string>;
}
