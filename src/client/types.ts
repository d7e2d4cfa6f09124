/**
 * The shapes the client reads and sends, derived from the server's TypeBox
 * schemas in src/core/wire.ts (type-only imports: nothing of the server runs in
 * the client). Where the client must be more tolerant than the server's own
 * schema, the difference is spelled out here rather than copied by hand:
 *
 * - `status` may be a value newer than this client knows: seed 4.3 says to keep
 *   polling on any value other than SUCCESS and FAIL, so it stays a string;
 * - members may carry extension fields added later (`flaky`, `skipped`, `artifacts`, …).
 */
import type {
  CreateTestRunSetBody as WireCreateBody,
  CreateTestRunSetResult as WireCreateResult,
  TestRun as WireTestRun,
  TestRunSetStatus as WireStatus,
  TestSelectionBody as WireSelection,
} from '../core/wire.js';
import type { QueueView as WireQueue, WorkerView as WireWorker } from '../core/wire-dashboard.js';
import { passedAfterRetry, type RunState } from '../core/states.js';

/** A known state, or a string from a newer server; keeps editor completion for the known ones. */
export type StatusValue = RunState | (string & Record<never, never>);

export type CreateTestRunSetBody = WireCreateBody;
/** `select` of the create body: which of the environment's tests the set runs (fields AND together). */
export type TestSelection = WireSelection;
export type CreateTestRunSetResult = WireCreateResult;

export type TestRunSetStatus = Omit<WireStatus, 'status'> & { status: StatusValue };
export type Counts = WireStatus['progress']['counts'];

export type TestRun = Omit<WireTestRun, 'status' | 'starts' | 'restarts' | 'flaky' | 'skipped' | 'quarantined' | 'artifacts' | 'workerId' | 'heldBy' | 'expectedMs' | 'cancelledBy' | 'cases'> & {
  status: StatusValue;
  /** Extension: how many times it was started. Older servers omit it (src/core/starts.ts reads that as no restart). */
  starts?: number;
  /** Extension: why each start after the first happened. Older servers omit it: none. */
  restarts?: WireTestRun['restarts'];
  /** Extension: the cases of its result (a command's junit:). Older servers omit it. */
  cases?: WireTestRun['cases'];
  /** Extension: the key whose cancel ended it. Older servers omit it. */
  cancelledBy?: { keyId: string; keyName: string } | null;
  /** Extension: the worker that started its last attempt. Older servers omit it. */
  workerId?: string | null;
  /** Extension: the worker holding it while it is still WAITING (its batch's process is starting). Older servers omit it. */
  heldBy?: string | null;
  /** Extension: the duration expected when the set was created. Older servers omit it. */
  expectedMs?: number | null;
  /** Extension: passed only after a retry. Older servers omit it (see `isFlaky`). */
  flaky?: boolean;
  /** Extension: passed because Playwright skipped it. Older servers omit it: read as false (see `isSkipped`). */
  skipped?: boolean;
  /** Extension: quarantined when the set was created; its failure does not fail the set. Older servers omit it: false (see `isQuarantined`). */
  quarantined?: boolean;
  /** Extension: artifact descriptors; not interpreted by the client yet. */
  artifacts?: unknown;
};

/** A conditional status read (RunsetClient.getTestRunSetIfChanged). */
export interface ConditionalStatus {
  /** null: not modified — still the status the `etag` sent names. */
  status: TestRunSetStatus | null;
  /** The answer's ETag (null from a server without them): send it back to ask "anything new?". */
  etag: string | null;
  /** The server held the answer for a change, as asked (`Preference-Applied: wait`). */
  waited: boolean;
}

/** Extension: the answer to a cancel — the set's status, and whether this request ended it. */
export type CancelResult = TestRunSetStatus & { cancelled: boolean };

/** Extension: a live worker process (GET /api/v0/workers) and the members it runs. */
export type Worker = WireWorker;

/** Where a queued set waits (its environment's maxConcurrentSets is taken): sets ahead, the limit, the sets holding the places. */
export type QueuePlace = WireQueue;

export function isFinalStatus(status: StatusValue): status is 'SUCCESS' | 'FAIL' {
  return status === 'SUCCESS' || status === 'FAIL';
}

/** Retried-then-passed: the server's flag when it sends one, otherwise inferred from attempts. */
export function isFlaky(run: TestRun): boolean {
  if (typeof run.flaky === 'boolean') return run.flaky && run.status === 'SUCCESS';
  return passedAfterRetry(run.status, run.attempts);
}

/** Quarantined (its failure does not fail the set): only the server can say so; absent is false. */
export function isQuarantined(run: TestRun): boolean {
  return run.quarantined === true;
}

/** Passed without running (Playwright's test.skip, test.fixme): only the server can say so; absent is false. */
export function isSkipped(run: TestRun): boolean {
  return run.skipped === true && run.status === 'SUCCESS';
}
