/**
 * How a tool answers: structured content (checked against its output schema)
 * with the same data as JSON text for clients that read only text, or, when the
 * API refused or failed, `isError` with the API's own problem (title, code,
 * status, detail) — a `read` key that tries to trigger reads the API's 403.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { RunsetApiError } from '../client/errors.js';

export function answer(data: Record<string, unknown>, summary?: string): CallToolResult {
  const json = JSON.stringify(data, null, 2);
  return { structuredContent: data, content: [{ type: 'text', text: summary ? `${summary}\n\n${json}` : json }] };
}

export function refusal(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

/** The API's problem as one line an agent can act on; any other error by its message. */
export function describeFailure(error: unknown): string {
  if (error instanceof RunsetApiError) {
    const status = error.status === null ? '' : `HTTP ${error.status}, `;
    return `${error.title} (${status}code ${error.code}): ${error.detail}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** Runs a tool's work; any failure becomes an `isError` result rather than a protocol error, so the agent reads why. */
export async function guarded(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    return refusal(describeFailure(error));
  }
}
