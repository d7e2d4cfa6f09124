/**
 * A framework's own listing of one entry's cases: the adapter's listing run
 * (every case reported, none run) in the entry's folder, with the suite's own
 * installed framework, its report read by the adapter. What fails (no
 * framework, a config error, a file that does not load) is an Error carrying
 * the framework's own first lines.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FrameworkTestSpec } from '../../core/types.js';
import { suiteEnvironment } from '../environment.js';
import { errorSummary } from '../playwright/error-text.js';
import type { ReportedCase } from './adapter.js';
import { locateFramework, type FrameworkInstall } from './locate.js';
import { runFramework, type FrameworkExit } from './process.js';
import { FRAMEWORK_ADAPTERS } from './registry.js';

/** A listing that takes longer is stuck (a config waiting on something). */
export const LIST_TIMEOUT_MS = 120_000;

export async function listFrameworkEntry(spec: FrameworkTestSpec): Promise<ReportedCase[]> {
  const adapter = FRAMEWORK_ADAPTERS[spec.type];
  const install = await locateFramework(adapter, spec);
  if (adapter.list) return adapter.list(spec, install);
  const { text, exit } = await runListing(install, spec.dir, (report) => ({ args: adapter.listArgs(spec, report), env: suiteEnvironment(spec.dir, {}) }));
  const said = errorSummary(exit.log);
  if (text === undefined) {
    const why = exit.stopped ? `was stopped after ${LIST_TIMEOUT_MS / 1000}s` : `exited with code ${exit.code ?? exit.signal} without writing its report`;
    throw new Error(`${adapter.title} ${install.version} ${why}${said ? `: ${said}` : ''}`);
  }
  const { cases, fileErrors } = (adapter.readListing ?? adapter.read)(text, spec.dir);
  const [broken] = fileErrors;
  if (broken) throw new Error(`${broken[0]}: ${errorSummary(broken[1], false) || said}`);
  return cases;
}

/**
 * A listing's process, for every kind of listed entry (Playwright's too,
 * ../../config/playwright-listing.ts): run in the entry's folder through the
 * one process path, stopped past LIST_TIMEOUT_MS, with the arguments and
 * environment `how` gives for the report file it writes into a scratch folder;
 * that report's text (undefined when it wrote none) and how the process ended.
 */
export async function runListing(
  install: FrameworkInstall,
  dir: string,
  how: (report: string) => { args: string[]; env: NodeJS.ProcessEnv },
): Promise<{ text: string | undefined; exit: FrameworkExit }> {
  const scratch = await mkdtemp(path.join(tmpdir(), 'runset-list-'));
  try {
    const report = path.join(scratch, 'report.json');
    const { args, env } = how(report);
    const exit = await runFramework(install, args, { cwd: dir, env, deadlineMs: LIST_TIMEOUT_MS });
    return { text: await readFile(report, 'utf8').catch(() => undefined), exit };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
