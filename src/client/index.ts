/**
 * The runset client SDK (`import { RunsetClient } from 'runset/client'`).
 *
 * It talks to a runset server over HTTP only: nothing here imports server code
 * (a test walks the compiled import graph to keep it so), and its types are
 * derived from the server's own wire schemas (src/core/wire.ts).
 *
 * @example
 *   const client = new RunsetClient({ url: process.env.RUNSET_URL!, apiKey: process.env.RUNSET_API_KEY! });
 *   const { testRunSetId } = await client.createTestRunSet({ env: 'staging' }, { idempotencyKey: randomUUID() });
 *   const final = await client.waitForTestRunSet(testRunSetId, { interval: '10s', timeout: '10m' });
 *   if (final.status === 'FAIL') console.log(await client.listTestRuns(testRunSetId));
 */
export { RunsetClient, type ConditionalReadOptions, type CreateOptions, type RequestOptions, type RunsetClientOptions } from './client.js';
export {
  isTransient,
  isTransientFailure,
  parseRetryAfter,
  RunsetApiError,
  type RunsetApiErrorData,
  type RunsetErrorCodeValue,
  type RunsetErrorKind,
} from './errors.js';
export { DEFAULT_INTERVAL_MS, DEFAULT_TIMEOUT_MS, LONG_POLL_SECONDS, type WaitOptions, type WaitProgress } from './wait.js';
export {
  isFinalStatus,
  isFlaky,
  isQuarantined,
  isSkipped,
  type CancelResult,
  type ConditionalStatus,
  type Counts,
  type CreateTestRunSetBody,
  type TestSelection,
  type CreateTestRunSetResult,
  type StatusValue,
  type TestRun,
  type TestRunSetStatus,
  type Worker,
  type QueuePlace,
} from './types.js';
export { formatDuration, parseDuration, DurationError } from '../core/duration.js';
