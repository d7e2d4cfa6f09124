/**
 * A single member run as a batch of one: its executor's `run`, with the
 * member's retries (each attempt under the test's timeout), reporting its
 * attempts and its end as a batch executor reports its cases' (see
 * BatchExecutionContext), so one run path (./run.ts) serves both.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ArtifactFile, BatchExecutionContext, ExecutionContext, ExecutionResult, Executor, TestSpec } from '../core/types.js';
import { ArtifactNames } from '../executors/artifact-files.js';
import { messageOf } from './outcome-builder.js';

export type SingleContext = ExecutionContext & Pick<BatchExecutionContext, 'onBegin' | 'onEnd'>;

/**
 * Runs `spec` until it passes or its retries are spent. Ends it `interrupted`
 * when the run was aborted (shutdown, a lost lease, a cancel): nothing is
 * written for it then.
 */
export async function runSingle(executor: Executor, spec: TestSpec, ctx: SingleContext): Promise<void> {
  const started = performance.now();
  const transcripts: string[] = [];
  // Every attempt's files, each path once and each name unique across attempts: a retried command's first try left its own.
  const files = new Map<string, ArtifactFile>();
  const names = new ArtifactNames();
  let result: ExecutionResult = { passed: false, error: 'not run', output: '' };
  let attempt = 0;
  while (attempt <= spec.retries && !ctx.signal.aborted) {
    attempt++;
    ctx.onBegin(0, attempt);
    const limit = attemptSignal(ctx.signal, spec.timeoutSeconds * 1000);
    try {
      result = await executor.run(spec, { variables: ctx.variables, signal: limit.signal, outbound: ctx.outbound, runAs: ctx.runAs });
    } catch (err) {
      result = { passed: false, error: `executor crashed: ${messageOf(err)}`, output: '' };
    } finally {
      limit.done();
    }
    if (limit.timedOut() && !ctx.signal.aborted) {
      result = { ...result, passed: false, error: `timed out after ${spec.timeoutSeconds}s (timeoutSeconds)` };
    }
    transcripts.push(spec.retries > 0 ? `── attempt ${attempt} ──\n${result.output}` : result.output);
    for (const file of result.artifacts ?? []) if (!files.has(file.path)) files.set(file.path, { ...file, name: names.next(file.name, path.extname(file.name)) });
    if (result.passed) break;
  }
  ctx.onEnd(0, {
    ...result,
    output: transcripts.join('\n'),
    attempts: attempt,
    durationMs: performance.now() - started,
    artifacts: [...files.values()],
    interrupted: ctx.signal.aborted || undefined,
  });
}

/**
 * An attempt's signal: aborted with the run's reason when the run is, or with
 * a TimeoutError after `ms` (AbortSignal.timeout's reason). Made by hand, and
 * undone by `done` when the attempt ends: AbortSignal.any over
 * AbortSignal.timeout cost a short member about a tenth of a millisecond of
 * CPU (weak references, a timer that outlived the attempt until it fired).
 */
function attemptSignal(run: AbortSignal, ms: number): { signal: AbortSignal; timedOut: () => boolean; done: () => void } {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = (): void => controller.abort(run.reason);
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }, ms);
  timer.unref(); // as AbortSignal.timeout's: the run in progress holds the process, not its limit
  if (run.aborted) onAbort();
  else run.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    done: () => {
      clearTimeout(timer);
      run.removeEventListener('abort', onAbort);
    },
  };
}
