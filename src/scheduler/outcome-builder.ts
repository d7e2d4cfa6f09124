/**
 * What a member's outcome says, for a single member and a case of a batch
 * alike: the executor's result turned into a RunOutcome — its failure as one
 * line, the tail of its output, both with the set's secrets masked, its
 * files stored as artifacts (with a note in the output for each file not kept),
 * and whether it passed only by being skipped.
 */
import type { ArtifactSaver } from '../artifacts/save.js';
import type { ArtifactFile, ExecutionResult, OsUser, RunOutcome } from '../core/types.js';
import { redact } from '../secrets/index.js';

const OUTPUT_LIMIT = 64 * 1024;

/** How a member ended on this worker: the executor's result with its attempts, time and files. */
export interface EndedMember extends ExecutionResult {
  attempts: number;
  durationMs: number;
  artifacts: readonly ArtifactFile[];
}

export interface OutcomeContext {
  /** The values to mask wherever they appear. */
  secrets: readonly string[];
  /** Where files become stored artifacts; without it they are not kept. */
  artifacts?: ArtifactSaver;
  /** The folder the files are in (a batch's scratch folder); a member that ran without one has no files. */
  workDir?: string;
  /** The user the member ran as (its slot's, under --run-as): files it could not read are not kept. */
  reader?: OsUser;
}

export async function buildOutcome(ended: EndedMember, ctx: OutcomeContext): Promise<RunOutcome> {
  const { secrets } = ctx;
  const { artifacts, workDir } = ctx;
  const saved = artifacts && workDir !== undefined && ended.artifacts.length > 0 ? await artifacts.save(ended.artifacts, secrets, workDir, ctx.reader) : undefined;
  const notes = saved && saved.notes.length > 0 ? `\n${saved.notes.join('\n')}\n` : '';
  return {
    status: ended.passed ? 'SUCCESS' : 'FAIL',
    attempts: ended.attempts,
    error: ended.passed ? null : oneLine(redact(ended.error ?? 'failed', secrets)),
    output: tail(redact(ended.output + notes, secrets)),
    durationMs: ended.durationMs,
    // Only a pass can be a skip: a case that failed and was skipped on its retry still failed.
    ...(ended.passed && ended.skipped === true ? { skipped: true } : {}),
    artifacts: saved?.artifacts ?? [],
    // The cases of a report it wrote (a command's junit:), secrets masked like its output.
    ...(ended.cases && ended.cases.length > 0
      ? { cases: ended.cases.map((c) => ({ ...c, name: redact(c.name, secrets), error: c.error === null ? null : redact(c.error, secrets) })) }
      : {}),
  };
}

/** The outcome of a member that failed before anything ran (no executor, variables that do not resolve, no scratch folder). */
export function failedBeforeStart(error: string, durationMs: number): RunOutcome {
  return { status: 'FAIL', attempts: 0, error: oneLine(error), output: '', durationMs };
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
