/**
 * Waiting for sets inside a tool call: the client's own wait (long polls, retries
 * of transient failures), MCP progress notifications as members end (when the
 * agent asked for progress), and a timeout the agent chooses. Running out of
 * time is an answer, not an error: the set goes on, and the agent may wait again.
 */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RunsetClient } from '../client/client.js';
import { RunsetApiError } from '../client/errors.js';
import type { TestRunSetStatus } from '../client/types.js';

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export const WAIT_DEFAULT_SECONDS = 600;
export const WAIT_MAX_SECONDS = 3_600;

/** One notification per change of what ended; no token, no notifications (the agent did not ask). */
export function progressReporter(extra: Extra): (done: number, total: number, message: string) => void {
  const token = extra._meta?.progressToken;
  let last = -1;
  return (done, total, message) => {
    if (token === undefined || done === last) return;
    last = done;
    void extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: done, total, message } }).catch(() => undefined);
  };
}

function ended(status: TestRunSetStatus): number {
  return status.progress.counts.SUCCESS + status.progress.counts.FAIL;
}

function total(status: TestRunSetStatus): number {
  const c = status.progress.counts;
  return c.WAITING + c.RUNNING + c.SUCCESS + c.FAIL;
}

/** Waits for one set; resolves with its last status and whether the time ran out first. */
export async function waitForSet(client: RunsetClient, id: string, timeoutSeconds: number, extra: Extra): Promise<{ status: TestRunSetStatus; timedOut: boolean }> {
  const report = progressReporter(extra);
  try {
    const status = await client.waitForTestRunSet(id, {
      timeout: timeoutSeconds * 1000,
      interval: 2_000,
      signal: extra.signal,
      onProgress: (s) => report(ended(s), total(s), `${s.status}: ${ended(s)} of ${total(s)} members ended, ${s.progress.counts.FAIL} failed`),
    });
    return { status, timedOut: false };
  } catch (error) {
    if (error instanceof RunsetApiError && error.kind === 'timeout') return { status: await client.getTestRunSet(id), timedOut: true };
    throw error;
  }
}

/** Waits for several sets at once (a test run N times); progress counts the sets that ended. */
export async function waitForSets(client: RunsetClient, ids: readonly string[], timeoutSeconds: number, extra: Extra): Promise<Array<{ status: TestRunSetStatus; timedOut: boolean }>> {
  const report = progressReporter(extra);
  let done = 0;
  return Promise.all(
    ids.map(async (id) => {
      const silent = { ...extra, _meta: undefined };
      const result = await waitForSet(client, id, timeoutSeconds, silent);
      done += 1;
      report(done, ids.length, `${done} of ${ids.length} sets ended`);
      return result;
    }),
  );
}

export function timeoutNote(seconds: number): string {
  return `not finished within ${seconds} s; it goes on running: call wait_for_set with its setId to wait again, or cancel_set to stop it`;
}
