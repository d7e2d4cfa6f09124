/**
 * The end of a waited trigger: read the members (where the server lists them),
 * print the summary, write the reports, and pick the exit code. Reports are
 * written for FAIL and timeouts too — that is when CI users need them most.
 */
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { formatDuration } from '../core/duration.js';
import type { RunsetClient } from './client.js';
import { setPageUrl } from './links.js';
import { summaryLines } from './progress.js';
import { redact } from './redact.js';
import { annotations, outputLines, stepSummaryMarkdown } from './reports/github.js';
import { countsOf, verdictText, type Outcome, type ReportInput } from './reports/model.js';
import { withRetry } from './retry.js';
import { EXIT_CODES, type ExitCode, type TriggerContext } from './trigger-context.js';
import type { TestRun, TestRunSetStatus } from './types.js';

/** Members are detail, not the verdict: a bounded extra wait for them, even after a timeout. */
const MEMBERS_MIN_BUDGET_MS = 5_000;
const MEMBERS_MAX_BUDGET_MS = 30_000;

export async function finish(client: RunsetClient, id: string, outcome: Outcome, last: TestRunSetStatus | null, ctx: TriggerContext): Promise<ExitCode> {
  ctx.progress.stop();
  const members = await fetchMembers(client, id, last, ctx);
  const suiteVersion = await fetchSuiteVersion(client, id, ctx);
  const failing = outcome === 'TIMEOUT' ? null : await client.getTestRunSetFailing(id).catch(() => null);
  const input: ReportInput = {
    env: ctx.options.env,
    setId: id,
    outcome,
    status: last,
    members,
    elapsedMs: Date.now() - ctx.started,
    dashboardUrl: setPageUrl(client.url, id),
    ...(suiteVersion ? { suite: suiteVersion } : {}),
    // The server's count of the ends that failed the set (verdictText); unreadable: the members' flags tell.
    ...(failing === null ? {} : { failing }),
  };
  for (const line of summaryLines(input)) ctx.stderr.write(`${line}\n`);
  await writeReports(input, ctx);
  // Only the status object, so `runset trigger --wait --json | jq .status` works.
  if (ctx.options.json && last) ctx.stdout.write(`${JSON.stringify(last)}\n`);

  let code: ExitCode = outcome === 'SUCCESS' ? EXIT_CODES.success : outcome === 'FAIL' ? EXIT_CODES.fail : EXIT_CODES.timeout;
  for (const problem of ctx.problems) ctx.stderr.write(`runset: error: ${problem}\n`);
  // A requested report that is missing must not pass silently; a FAIL or timeout keeps its own code.
  if (ctx.problems.length > 0 && code === EXIT_CODES.success) code = EXIT_CODES.error;
  ctx.stderr.write(`runset: ${reason(input, code, ctx)} (exit ${code})\n`);
  return code;
}

function reason(input: ReportInput, code: ExitCode, ctx: TriggerContext): string {
  const counts = countsOf(input);
  if (code === EXIT_CODES.error) return 'error: the tests passed, but a report could not be written';
  if (input.outcome === 'SUCCESS' || input.outcome === 'FAIL') return verdictText(input);
  const last = input.status ? `still ${input.status.status}` : 'no status could be read';
  return `timed out after --timeout ${formatDuration(ctx.options.timeoutMs)}: test run set ${input.setId} ${last}, ${counts.unfinished} of ${counts.total} tests not finished`;
}

async function fetchMembers(client: RunsetClient, id: string, last: TestRunSetStatus | null, ctx: TriggerContext): Promise<TestRun[] | null> {
  const budgetMs = Math.min(MEMBERS_MAX_BUDGET_MS, Math.max(MEMBERS_MIN_BUDGET_MS, ctx.deadline - Date.now()));
  const signal = AbortSignal.timeout(budgetMs);
  try {
    const runs = await withRetry(() => client.listTestRuns(id, { signal }), {
      deadline: Date.now() + budgetMs,
      policy: { baseMs: Math.min(1000, Math.max(50, ctx.options.intervalMs)), maxMs: 5_000 },
      signal,
    });
    // An empty list for a set with members would hide its counts: report the counts instead.
    const c = last?.progress.counts;
    const total = c ? c.WAITING + c.RUNNING + c.SUCCESS + c.FAIL : 0;
    if (runs && runs.length === 0 && total > 0) return null;
    return runs;
  } catch (error) {
    // A 404 already came back as null; anything else costs the detail, not the verdict.
    ctx.progress.note(`could not list the tests of the set (${error instanceof Error ? error.message : String(error)}); reporting counts only`);
    return null;
  }
}

async function writeReports(input: ReportInput, ctx: TriggerContext): Promise<void> {
  const { options, env } = ctx;
  if (options.junit) {
    const file = resolve(options.junit);
    await attempt(ctx, `the JUnit report to ${file}`, async () => {
      // Loaded only when asked for: the JUnit writer (xmlbuilder2) is some 150 modules a trigger without --junit never needs.
      const { buildJunit } = await import('./reports/junit.js');
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, redact(buildJunit(input), ctx.secrets), 'utf8');
      ctx.stderr.write(`runset: wrote JUnit report ${file}\n`);
    });
  }
  const summaryFile = env.GITHUB_STEP_SUMMARY;
  if (summaryFile) {
    await attempt(ctx, 'the GitHub step summary', () => appendFile(summaryFile, redact(stepSummaryMarkdown(input), ctx.secrets), 'utf8'));
  }
  // Annotations go to stderr: the runner reads workflow commands from both streams, and stdout is reserved.
  if (env.GITHUB_ACTIONS === 'true') for (const line of annotations(input)) ctx.stderr.write(`${line}\n`);
  if (input.status) await writeGithubOutputs(ctx, { status: input.status.status });
}

/** Appends step outputs when running under GitHub Actions (`$GITHUB_OUTPUT` set); never throws. */
export async function writeGithubOutputs(ctx: TriggerContext, outputs: Record<string, string>): Promise<void> {
  const file = ctx.env.GITHUB_OUTPUT;
  if (!file) return;
  await attempt(ctx, 'the GitHub step outputs', () => appendFile(file, redact(outputLines(outputs), ctx.secrets), 'utf8'));
}

async function attempt(ctx: TriggerContext, what: string, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    const message = `could not write ${what}: ${error instanceof Error ? error.message : String(error)}`;
    if (!ctx.problems.includes(message)) ctx.problems.push(message);
  }
}

/** The suite version the set ran, when the trigger named one (`--suite`, `--suite-name`): for the reports. Detail, never the verdict: unreadable is none. */
async function fetchSuiteVersion(client: RunsetClient, id: string, ctx: TriggerContext): Promise<ReportInput['suite'] | null> {
  if (ctx.options.suite === undefined) return null;
  const version = await client.getTestRunSetSuite(id).catch(() => null);
  if (!version) return null;
  const asked = ctx.options.suite;
  return { id: version.id, name: asked !== version.id && version.names.includes(asked) ? asked : (version.names[0] ?? null), commit: version.commit };
}
