/**
 * What the executors of listed entries (Playwright's, every framework's) do
 * alike around a share's one process: a case run outside any batch is a batch
 * of one in a scratch folder, and a share that cannot start ends every member
 * with the same failure.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BatchExecutionContext, CaseResult, ExecutionContext, ExecutionResult } from '../core/types.js';
import { errorSummary } from './playwright/error-text.js';

/** One case outside any batch, run by `runBatch` as a batch of one in a scratch folder named after `type`. */
export async function runAlone<S>(type: string, spec: S, ctx: ExecutionContext, runBatch: (specs: S[], ctx: BatchExecutionContext) => Promise<void>): Promise<ExecutionResult> {
  const workDir = await mkdtemp(path.join(tmpdir(), `runset-${type}-`));
  let result: CaseResult | undefined;
  try {
    await runBatch([spec], { ...ctx, workDir, parallelism: 1, onBegin: () => undefined, onEnd: (_, r) => (result = r) });
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  return result ?? { passed: false, error: 'aborted', output: '' };
}

/**
 * Every member of the share ended with `error`, none having run; `output` is
 * what its process printed, its first error lines added to `error`, then
 * `hint`, what to do about it.
 */
export function failAll(specs: readonly unknown[], ctx: Pick<BatchExecutionContext, 'onEnd'>, error: string, output = '', hint = ''): void {
  const said = output ? errorSummary(output) : '';
  const text = (said ? `${error}: ${said}` : error) + (hint ? `; ${hint}` : '');
  specs.forEach((_, index) => ctx.onEnd(index, { passed: false, error: text, output, attempts: 0, durationMs: 0, artifacts: [] }));
}

/**
 * Every member of a share whose process said nothing within `limitMs` (its
 * config and runset's reporter never loaded, PROCESS_START_MS): the same words
 * for Playwright and every framework, ending with where to look. `runset check`
 * lists each entry with its own framework, which loads its config.
 */
export function failSilentStart(specs: readonly unknown[], ctx: Pick<BatchExecutionContext, 'onEnd'>, who: string, limitMs: number, output: string): void {
  const error = `${who} said nothing for ${Math.round(limitMs / 1000)}s after it started (runset's reporter never loaded): it was stuck before its first test, and was stopped`;
  failAll(specs, ctx, error, output, '`runset check` shows whether its config loads');
}
