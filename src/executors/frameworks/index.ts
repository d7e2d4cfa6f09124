/**
 * The executor of every framework entry (`type: vitest`, `jest`, …): the
 * members a worker claims together (one entry's cases, one set) run in ONE
 * framework process, never one per test, with the suite's own framework
 * (./locate.ts); each case's outcome, duration, retries and skip are read from
 * the framework's machine-readable report (its adapter, ./adapter.ts). Where
 * the adapter has a live reporter, members begin and end as the framework
 * tells (./live.ts), and a process silent past its start allowance is stopped
 * (../live-tracker.ts: the start guard); otherwise, and for every case the stream did not end,
 * cases begin together when the process starts and end when its report is
 * read. A case the report lacks fails with the framework's own first lines.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BatchExecutionContext, CaseResult, ExecutionContext, Executor, FrameworkName, FrameworkTestSpec } from '../../core/types.js';
import { memberPolicy, suiteEnvironment, type TestProcessPolicy } from '../environment.js';
import { errorSummary } from '../playwright/error-text.js';
import { EventLog } from '../event-log.js';
import { REPORTER_FILE_ENV } from '../playwright/reporter.js';
import { handOver } from '../run-as.js';
import { failAll, failSilentStart, runAlone } from '../share.js';
import { PROCESS_START_MS } from '../test-process.js';
import { caseKey } from '../listed-case.js';
import { type FrameworkAdapter, type FrameworkReport, type RunPlan } from './adapter.js';
import type { LiveEvent } from './live-events.js';
import { guardStart } from '../live-tracker.js';
import { FrameworkTracker } from './live.js';
import { ShareArtifacts } from './share-artifacts.js';
import { locateFramework, type FrameworkInstall } from './locate.js';
import { runFramework, type FrameworkExit } from './process.js';
import { FRAMEWORK_ADAPTERS } from './registry.js';

export interface FrameworkExecutorOptions {
  policy?: TestProcessPolicy;
  /** The time a share's process gets to load its config and runset's reporter (../live-tracker.ts), also in its deadline; default PROCESS_START_MS. */
  processStartMs?: number;
}

export function createFrameworkExecutor(type: FrameworkName, options: FrameworkExecutorOptions = {}): Executor<FrameworkTestSpec> {
  const adapter = FRAMEWORK_ADAPTERS[type];
  const policy = options.policy ?? {};
  const startMs = options.processStartMs ?? PROCESS_START_MS;
  return Object.freeze({
    type,
    run: (spec: FrameworkTestSpec, ctx: ExecutionContext) =>
      runAlone(type, spec, ctx, (specs, batch) => runBatch(specs, batch, adapter, memberPolicy(policy, ctx.runAs), startMs)),
    runBatch: (specs: FrameworkTestSpec[], ctx: BatchExecutionContext) => runBatch(specs, ctx, adapter, memberPolicy(policy, ctx.runAs), startMs),
  });
}

async function runBatch(specs: FrameworkTestSpec[], ctx: BatchExecutionContext, adapter: FrameworkAdapter, policy: TestProcessPolicy, startMs: number): Promise<void> {
  const first = specs[0];
  if (first === undefined) return;
  const cases = specs.map((s) => s.case);
  if (cases.some((c) => c === undefined)) return failAll(specs, ctx, `not a listed ${adapter.title} case (the config entry was never listed)`);
  let install: FrameworkInstall;
  try {
    install = await locateFramework(adapter, first);
  } catch (error) {
    return failAll(specs, ctx, (error as Error).message);
  }
  const report = path.join(ctx.workDir, 'report.json');
  const plan: RunPlan = { report, workers: Math.max(1, ctx.parallelism), variables: ctx.variables };
  const args = adapter.runArgs(first, cases as NonNullable<FrameworkTestSpec['case']>[], plan);
  const env = suiteEnvironment(first.dir, ctx.variables, policy);
  const artifacts = new ShareArtifacts(specs, ctx.workDir);
  const live = startLive(specs, ctx, adapter, install, plan, artifacts, startMs);
  // Guarded only where runset's reporter speaks before the suite's own setup: nothing else says when a process has started.
  const guard = live?.reporting.readyBeforeSetup ? guardStart(live.tracker) : undefined;
  if (live) {
    args.push(...live.args);
    env[REPORTER_FILE_ENV] = live.events.file;
  } else specs.forEach((_, index) => ctx.onBegin(index, 1));
  handOver(ctx.workDir, policy.runAs);
  const deadlineMs = startMs + specs.reduce((sum, s) => sum + s.timeoutSeconds * 1000 * (s.retries + 1), 0);
  let exit: FrameworkExit;
  try {
    // Every event written before the exit is handed on first: the process path reads the event file to its end.
    const signal = guard ? AbortSignal.any([ctx.signal, guard.signal]) : ctx.signal;
    exit = await runFramework(install, args, { cwd: first.dir, env, runAs: policy.runAs, containment: policy.containment, signal, deadlineMs, events: live?.events });
  } finally {
    guard?.dispose();
  }
  if (guard?.reason !== undefined && !ctx.signal.aborted) return failSilentStart(specs, ctx, `${adapter.title} ${install.version}`, startMs, exit.log);
  if (exit.stopped === 'aborted') return;
  const read = await readReport(adapter, report, first.dir);
  const byKey = new Map((read instanceof Error ? [] : read.cases).map((c) => [caseKey(c), c]));
  const ended = new Map<number, CaseResult>();
  specs.forEach((spec, index) => {
    if (live?.tracker.ended(index)) return;
    const c = spec.case as NonNullable<FrameworkTestSpec['case']>;
    const found = byKey.get(caseKey(c));
    ended.set(index, found ? artifacts.result(index, found) : missing(adapter, install, exit, read, c.file, { deadlineMs, startMs }));
  });
  await artifacts.addWritten(ended);
  for (const [index, result] of ended) ctx.onEnd(index, result);
}

/**
 * The live channel of this share, when its adapter has one for this version:
 * its reporter's arguments, the followed event file. Not with `artifacts:`
 * globs: their files are given out when the process has ended.
 */
function startLive(specs: FrameworkTestSpec[], ctx: BatchExecutionContext, adapter: FrameworkAdapter, install: FrameworkInstall, plan: RunPlan, artifacts: ShareArtifacts, startMs: number) {
  const reporting = artifacts.globbed ? undefined : adapter.liveReporter?.(install.version, plan);
  if (!reporting) return undefined;
  const first = specs[0] as FrameworkTestSpec;
  const tracker = new FrameworkTracker(specs, adapter, first.dir, reporting.caseStarts, ctx, (index, c) => artifacts.result(index, c), startMs);
  try {
    const events = new EventLog<LiveEvent>(path.join(ctx.workDir, 'live-events.jsonl'), (event) => tracker.handle(event));
    return { args: reporting.args, events, tracker, reporting };
  } catch {
    return undefined; // no event file: the members move at the end, as without a live reporter
  }
}

async function readReport(adapter: FrameworkAdapter, file: string, dir: string): Promise<FrameworkReport | Error> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return new Error('without writing its report');
  }
  try {
    return adapter.read(text, dir);
  } catch (error) {
    return new Error(`with a report runset cannot read (${(error as Error).message})`);
  }
}

/** Why a case has no result, in the framework's own words where it gave any. */
function missing(adapter: FrameworkAdapter, install: FrameworkInstall, exit: FrameworkExit, read: FrameworkReport | Error, file: string, { deadlineMs, startMs }: { deadlineMs: number; startMs: number }): CaseResult {
  const said = errorSummary(exit.log);
  const fileError = read instanceof Error ? undefined : read.fileErrors.get(file);
  let error: string;
  if (exit.stopped === 'deadline') error = `${adapter.title} was stopped after ${Math.round(deadlineMs / 1000)}s (its cases' timeoutSeconds and ${Math.round(startMs / 1000)}s to start)`;
  else if (fileError !== undefined) error = `${file}: ${errorSummary(fileError, false) || fileError.trim()}`;
  else if (read instanceof Error) error = `${adapter.title} ${install.version} exited with code ${exit.code ?? exit.signal} ${read.message}`;
  else error = `the ${adapter.title} report has no result for this test (exit code ${exit.code ?? exit.signal})`;
  if (said && fileError === undefined) error += `: ${said}`;
  return { passed: false, error, output: exit.log, attempts: 1, durationMs: 0, artifacts: [] };
}
