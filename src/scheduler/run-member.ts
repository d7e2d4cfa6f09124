/**
 * One member, start to end: resolve its variables, run it through its executor
 * (with retries, each attempt under the test's timeout), and turn what came back
 * into an outcome with secrets masked. Knows nothing of stores or leases.
 */
import { performance } from 'node:perf_hooks';
import type { ClaimedRun, ExecutionResult, Executor, OutboundPolicy, RunOutcome, TestType, VariableValue } from '../core/types.js';
import { redact, type ResolvedVariables } from '../secrets/index.js';

export type ResolveVariables = (variables: Readonly<Record<string, VariableValue>>) => ResolvedVariables;

export interface RunMemberDeps {
  executors: ReadonlyMap<TestType, Executor>;
  resolveVariables: ResolveVariables;
  /** The outbound address rules of an environment's members (its allowPrivateTargets); default: the strict ones. */
  outboundPolicy?: (env: string) => OutboundPolicy;
  /** Aborted on shutdown or a lost lease. */
  signal: AbortSignal;
  onAttempt: (attempt: number) => void;
}

const OUTPUT_LIMIT = 64 * 1024;

export async function runMember(run: ClaimedRun, deps: RunMemberDeps): Promise<RunOutcome> {
  const started = performance.now();
  const spec = run.spec;
  let resolved: ResolvedVariables;
  try {
    resolved = deps.resolveVariables(run.variables);
  } catch (err) {
    return failBeforeStart(messageOf(err), started);
  }
  const executor = deps.executors.get(spec.type);
  if (!executor) {
    return failBeforeStart(`no executor for tests of type "${spec.type}" in this worker; it runs ${[...deps.executors.keys()].join(', ')}`, started);
  }

  const outbound = deps.outboundPolicy?.(run.env);
  const transcripts: string[] = [];
  let result: ExecutionResult = { passed: false, error: 'not run', output: '' };
  let attempt = 0;
  while (attempt <= spec.retries && !deps.signal.aborted) {
    attempt++;
    deps.onAttempt(attempt);
    const timeout = AbortSignal.timeout(spec.timeoutSeconds * 1000);
    const signal = AbortSignal.any([deps.signal, timeout]);
    try {
      result = await executor.run(spec, { variables: resolved.values, signal, outbound });
    } catch (err) {
      result = { passed: false, error: `executor crashed: ${messageOf(err)}`, output: '' };
    }
    if (timeout.aborted && !deps.signal.aborted) {
      result = { ...result, passed: false, error: `timed out after ${spec.timeoutSeconds}s (timeoutSeconds)` };
    }
    transcripts.push(spec.retries > 0 ? `── attempt ${attempt} ──\n${result.output}` : result.output);
    if (result.passed) break;
  }
  const output = transcripts.join('\n');
  return {
    status: result.passed ? 'SUCCESS' : 'FAIL',
    attempts: attempt,
    error: result.passed ? null : oneLine(redact(result.error ?? 'failed', resolved.secrets)),
    output: tail(redact(output, resolved.secrets)),
    durationMs: performance.now() - started,
  };
}

function failBeforeStart(error: string, started: number): RunOutcome {
  return { status: 'FAIL', attempts: 0, error: oneLine(error), output: '', durationMs: performance.now() - started };
}

/** What went wrong, from anything thrown (an executor may throw a non-Error). */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The last 64 KiB of a member's output: where the failure usually is. */
export function tail(text: string): string {
  return text.length > OUTPUT_LIMIT ? text.slice(-OUTPUT_LIMIT) : text;
}

/** A member's error as one line of at most 1000 characters. */
export function oneLine(text: string): string {
  const line = text.replace(/\s*\n\s*/g, ' ').trim();
  return line.length > 1000 ? `${line.slice(0, 997)}...` : line;
}
