/**
 * `runset trigger`: create a Test Run Set and, with `--wait`, follow it to the
 * end — the CI polling pattern of seed 4.3 as one command with a meaningful exit
 * code. The command line is parsed in src/cli/trigger.ts; this file only runs
 * the flow, with its environment and output streams passed in (so tests drive
 * it in-process).
 *
 * Exit codes: 0 SUCCESS (or created, without --wait), 1 FAIL, 2 timed out,
 * 3 anything else (usage, auth, not found, unreachable at create). The last line
 * on stderr always says which, and why.
 */
import { randomUUID } from 'node:crypto';
import { formatDuration } from '../core/duration.js';
import type { RunsetClient } from './client.js';
import { ciConcurrencyGroup, ciLabels, LABEL_RULES, LabelError, parseLabel } from './ci-labels.js';
import { connectFromEnv } from './connect.js';
import { watchInterrupts, type Interrupted, type InterruptWatch } from './interrupt.js';
import { RunsetApiError } from './errors.js';
import { finish, writeGithubOutputs } from './finish.js';
import { lastEndedSetOfPipeline } from './last-set.js';
import { ProgressReporter } from './progress.js';
import { watchQueue } from './queue-watch.js';
import { redactingSink } from './redact.js';
import type { Outcome } from './reports/model.js';
import { withRetry } from './retry.js';
import { setPageUrl } from './links.js';
import { EXIT_CODES, TriggerFailure, type ExitCode, type TriggerContext, type TriggerDeps, type TriggerEnv, type TriggerIo, type TriggerOptions } from './trigger-context.js';
import type { TestRunSetStatus } from './types.js';

export { EXIT_CODES, TriggerFailure, type ExitCode, type TriggerDeps, type TriggerEnv, type TriggerIo, type TriggerOptions };

/** Never throws: every failure becomes an exit code and a one-line reason. */
export async function runTrigger(options: TriggerOptions, env: TriggerEnv, io: TriggerIo, deps: TriggerDeps = {}): Promise<ExitCode> {
  const secrets = [env.RUNSET_API_KEY ?? ''];
  const stdout = redactingSink(io.stdout, secrets);
  const stderr = redactingSink(io.stderr, secrets);
  const started = Date.now();
  const progress = new ProgressReporter(stderr, started);
  const ctx: TriggerContext = { options, env, stdout, stderr, progress, started, deadline: started + options.timeoutMs, secrets, problems: [] };
  try {
    const client = connectFromEnv(env, deps);
    const id = options.rerunFailed !== undefined ? await rerunFailures(client, options.rerunFailed, ctx) : await createSet(client, ctx);
    await deps.onCreated?.(id);
    await writeGithubOutputs(ctx, { 'test-run-set-id': id, 'dashboard-url': setPageUrl(client.url, id) });
    if (!options.wait) {
      stdout.write(options.json ? `${JSON.stringify({ testRunSetId: id })}\n` : `${id}\n`);
      stderr.write(`runset: created test run set ${id} (env ${options.env}); not waiting (add --wait to follow it to the end)\n`);
      if (ctx.problems.length > 0) throw new TriggerFailure(EXIT_CODES.error, 'the set was created, but a GitHub output could not be written');
      return EXIT_CODES.success;
    }
    stderr.write(`runset: created test run set ${id} (env ${options.env}); waiting up to ${formatDuration(options.timeoutMs)}\n`);
    const interrupts = watchInterrupts(deps.signals ?? process);
    try {
      const { outcome, last } = await follow(client, id, ctx, interrupts.signal);
      return await finish(client, id, outcome, last, ctx);
    } catch (error) {
      if (interrupts.signal.aborted) throw await interrupted(client, id, ctx, interrupts);
      throw error;
    } finally {
      interrupts.dispose();
    }
  } catch (error) {
    progress.stop();
    const failure = error instanceof TriggerFailure ? error : new TriggerFailure(EXIT_CODES.error, `unexpected error: ${String(error)}`);
    for (const problem of ctx.problems) stderr.write(`runset: error: ${problem}\n`);
    stderr.write(`runset: error: ${failure.message} (exit ${failure.exitCode})\n`);
    return failure.exitCode;
  } finally {
    progress.stop();
  }
}

/** A deadline as an AbortSignal, so a hung request cannot outlive --timeout. */
function deadlineSignal(deadline: number, reason: () => unknown): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(reason()), Math.max(0, deadline - Date.now()));
  return { signal: controller.signal, dispose: () => clearTimeout(timer) };
}

/**
 * The create, retried on transient failures within --timeout. One
 * Idempotency-Key for all attempts: if an answer was lost after the server
 * created the set, the retry gets that same set back instead of a second one.
 */
async function createSet(client: RunsetClient, ctx: TriggerContext): Promise<string> {
  const { options } = ctx;
  const idempotencyKey = randomUUID();
  const labels = setLabels(ctx);
  const group = options.group ?? (options.ciGroup === false ? undefined : ciConcurrencyGroup(ctx.env));
  let body = {
    env: options.env,
    ...(Object.keys(options.overrides).length > 0 ? { envOverride: options.overrides } : {}),
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    ...(options.suite !== undefined ? { suite: options.suite } : {}),
    ...(options.select !== undefined ? { select: options.select } : {}),
    ...(group !== undefined ? { concurrencyGroup: group } : {}),
  };
  const giveUp = () => new TriggerFailure(EXIT_CODES.error, `could not create the test run set: no answer from the server within --timeout ${formatDuration(options.timeoutMs)}`);
  const { signal, dispose } = deadlineSignal(ctx.deadline, giveUp);
  try {
    const create = async () => {
      try {
        return await client.createTestRunSet(body, { idempotencyKey, signal });
      } catch (error) {
        // A server from before labels or groups: what the CI gave by default is a nicety, the set is what matters.
        if (fieldRefused(error, 'concurrencyGroup') && options.group === undefined) {
          ctx.progress.note('the server does not take concurrency groups (it is older than this client); creating the set without the CI\'s default group');
          body = { ...body, concurrencyGroup: undefined };
          return client.createTestRunSet(body, { idempotencyKey: randomUUID(), signal });
        }
        if (!fieldRefused(error, 'labels') || Object.keys(options.labels ?? {}).length > 0) throw error;
        ctx.progress.note('the server does not take labels (it is older than this client); creating the set without the CI context');
        body = { ...body, labels: undefined };
        return client.createTestRunSet(body, { idempotencyKey: randomUUID(), signal });
      }
    };
    const result = await withRetry(create, {
      deadline: ctx.deadline,
      policy: { baseMs: Math.min(1000, Math.max(50, options.intervalMs)), maxMs: 30_000 },
      signal,
      onRetry: (error, delayMs) => ctx.progress.note(`create: ${describe(error)}; retrying in ${formatDuration(delayMs)}`),
    });
    return result.testRunSetId;
  } catch (error) {
    throw createFailure(error);
  } finally {
    dispose();
  }
}

/**
 * `--rerun-failed ID`: a new set of the members of set ID that ended FAIL
 * (`last`: the newest ended set of this pipeline, ./last-set.ts). One
 * attempt, not retried: the rerun route takes no Idempotency-Key, so a retry
 * after a lost answer could create the set twice.
 */
async function rerunFailures(client: RunsetClient, earlier: string, ctx: TriggerContext): Promise<string> {
  const { signal, dispose } = deadlineSignal(ctx.deadline, () => new TriggerFailure(EXIT_CODES.error, `could not rerun the failures of ${earlier}: no answer within --timeout`));
  try {
    const id = earlier === 'last' ? await lastEndedSetOfPipeline(client, ctx.options.env, ctx.env, signal) : earlier;
    if (earlier !== 'last') {
      // A rerun takes the earlier set's environment: an --env that differs is a mistake to say, not to ignore.
      const env = await client.getTestRunSetEnv(id, { signal });
      if (env !== null && env !== ctx.options.env) throw new TriggerFailure(EXIT_CODES.error, `test run set ${id} ran in environment ${env}, not --env ${ctx.options.env}: a rerun of its failures runs in ${env}; pass --env ${env}`);
    }
    const result = await client.rerunTestRunSet(id, { only: 'failed' }, { signal });
    ctx.stderr.write(`runset: rerunning the failed tests of test run set ${id}\n`);
    return result.testRunSetId;
  } catch (error) {
    if (!(error instanceof RunsetApiError)) throw createFailure(error);
    throw new TriggerFailure(EXIT_CODES.error, `could not rerun the failures of ${earlier === 'last' ? 'the last set' : `test run set ${earlier}`}: ${describe(error)}${hint(error, 'create')}`, { cause: error });
  } finally {
    dispose();
  }
}

/** The CI's labels (unless --no-ci-labels) under the --label ones, at most as many as the server takes. */
function setLabels(ctx: TriggerContext): Record<string, string> {
  const given = ctx.options.labels ?? {};
  for (const [key, value] of Object.entries(given)) {
    try {
      parseLabel(`${key}=${value}`);
    } catch (error) {
      if (error instanceof LabelError) throw new TriggerFailure(EXIT_CODES.error, error.message);
      throw error;
    }
  }
  if (Object.keys(given).length > LABEL_RULES.maxLabels) throw new TriggerFailure(EXIT_CODES.error, `--label: ${Object.keys(given).length} labels; at most ${LABEL_RULES.maxLabels}`);
  const fromCi = ctx.options.ciLabels === false ? {} : ciLabels(ctx.env);
  const room = Object.entries(fromCi).filter(([key]) => !(key in given)).slice(0, Math.max(0, LABEL_RULES.maxLabels - Object.keys(given).length));
  return { ...Object.fromEntries(room), ...given };
}

/** A 400 that refuses this field of the body itself: the server predates it. */
function fieldRefused(error: unknown, field: 'labels' | 'concurrencyGroup'): boolean {
  return error instanceof RunsetApiError && error.status === 400 && error.code === 'unknown_field' && error.message.includes(`body: unknown field "${field}"`);
}

function createFailure(error: unknown): TriggerFailure {
  if (error instanceof TriggerFailure) return error;
  if (!(error instanceof RunsetApiError)) return new TriggerFailure(EXIT_CODES.error, `could not create the test run set: ${String(error)}`, { cause: error });
  const prefix = error.transient ? 'could not create the test run set (gave up retrying within --timeout)' : 'could not create the test run set';
  return new TriggerFailure(EXIT_CODES.error, `${prefix}: ${describe(error)}${hint(error, 'create')}`, { cause: error });
}

/** Polls to the end; a final error (401, 403, 404, …) becomes exit 3, running out of time an outcome. */
async function follow(client: RunsetClient, id: string, ctx: TriggerContext, signal: AbortSignal): Promise<{ outcome: Outcome; last: TestRunSetStatus | null }> {
  // A holder, not a `let`: the callback's writes are invisible to TypeScript's narrowing.
  const seen: { last: TestRunSetStatus | null } = { last: null };
  // Alongside the wait, ended with it: "queued: N sets ahead" while the set waits for its environment's places.
  const queueWatch = new AbortController();
  const queued = watchQueue(client, id, { intervalMs: ctx.options.intervalMs, signal: AbortSignal.any([signal, queueWatch.signal]), note: (line) => ctx.progress.note(line) });
  try {
    const final = await client.waitForTestRunSet(id, {
      interval: ctx.options.intervalMs,
      timeout: Math.max(0, ctx.deadline - Date.now()),
      signal,
      onProgress: (status) => {
        seen.last = status;
        ctx.progress.update(status);
      },
      onRetry: (error, delayMs) => ctx.progress.note(`status: ${describe(error)}; retrying in ${formatDuration(delayMs)}`),
    });
    return { outcome: final.status === 'SUCCESS' ? 'SUCCESS' : 'FAIL', last: final };
  } catch (error) {
    if (error instanceof RunsetApiError && error.kind === 'timeout') return { outcome: 'TIMEOUT', last: seen.last };
    if (signal.aborted) throw error;
    ctx.progress.stop();
    if (seen.last) await writeGithubOutputs(ctx, { status: seen.last.status });
    if (error instanceof RunsetApiError) {
      throw new TriggerFailure(EXIT_CODES.error, `could not read test run set ${id}: ${describe(error)}${hint(error, 'poll')}`, { cause: error });
    }
    throw new TriggerFailure(EXIT_CODES.error, `could not read test run set ${id}: ${String(error)}`, { cause: error });
  } finally {
    queueWatch.abort();
    await queued;
  }
}

/** Limit for the cancel sent on the way out: a CI runner gives a cancelled job a few seconds at most. */
const CANCEL_ON_EXIT_TIMEOUT_MS = 5_000;

/** The wait was interrupted by a signal: cancel the set (unless told not to) and say what became of it. */
async function interrupted(client: RunsetClient, id: string, ctx: TriggerContext, watch: InterruptWatch): Promise<TriggerFailure> {
  ctx.progress.stop();
  const reason = (watch.signal.reason as Interrupted).message;
  if (ctx.options.cancelOnExit === false) {
    return new TriggerFailure(EXIT_CODES.error, `${reason}; test run set ${id} was left running (--no-cancel-on-exit)`);
  }
  try {
    const signal = AbortSignal.any([watch.again, AbortSignal.timeout(CANCEL_ON_EXIT_TIMEOUT_MS)]);
    const result = await client.cancelTestRunSet(id, { signal });
    const what = result.cancelled ? `cancelled test run set ${id}` : `test run set ${id} had already ended ${result.status}`;
    return new TriggerFailure(EXIT_CODES.error, `${reason}; ${what}`);
  } catch (error) {
    const why = error instanceof RunsetApiError ? describe(error) : String(error);
    return new TriggerFailure(EXIT_CODES.error, `${reason}; could not cancel test run set ${id}: ${why}`, { cause: error });
  }
}

/** One line about an API error, without host or headers. */
export function describe(error: RunsetApiError): string {
  if (error.status === null) return `${error.title}: ${error.detail}`;
  const detail = error.detail && error.detail !== error.title ? ` — ${error.detail}` : '';
  return `${error.status} ${error.title} (${error.code})${detail}`;
}

/** The likely fix, for the errors people actually meet when setting up CI. */
function hint(error: RunsetApiError, phase: 'create' | 'poll'): string {
  if (error.status === 401) return '; check RUNSET_API_KEY';
  if (error.status === 403) return '; the key in RUNSET_API_KEY is not allowed to do this';
  if (error.status === 404 && phase === 'create') return '; check that RUNSET_URL is the base address ending in /api';
  if (error.kind === 'network' && phase === 'create') return '; check RUNSET_URL and that the server is up';
  return '';
}
