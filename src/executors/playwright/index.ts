/**
 * The `playwright` executor. The members a worker claims together (one entry,
 * every project of it, one set) run in ONE Playwright process — never one per test —
 * with runset's reporter telling, case by case, when each begins and ends.
 *
 * - Playwright: the suite's own @playwright/test, else runset's (./locate.ts).
 * - Config: the suite's, wrapped for the browser (./browser-choice.cts) and
 *   failure artifacts (./wrap-config.cts); the cases to run are named in a
 *   --test-list file.
 * - Timeouts: Playwright's own per test; a test it cannot stop (a blocked worker)
 *   gets the whole process tree killed by the hang guard (./tracker.ts).
 * - Cancellation (shutdown, lost lease): the process tree is killed at once.
 */
import { writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BatchExecutionContext, ExecutionContext, Executor, PlaywrightTestSpec } from '../../core/types.js';
import { memberPolicy, type TestProcessPolicy } from '../environment.js';
import { handOver } from '../run-as.js';
import { failAll, failSilentStart, runAlone } from '../share.js';
import { guard, type Guard } from '../live-tracker.js';
import { PROCESS_START_MS, type TestProcessExit } from '../test-process.js';
import { browserProblem, CHROMIUM_ARGS, chromiumVersion, DEFAULT_CHROMIUM } from './chromium.js';
import { missingFfmpeg } from './ffmpeg.js';
import { locateFramework } from '../frameworks/locate.js';
import { caseName } from '../listed-case.js';
import { playwrightAdapter } from './adapter.js';
import { playwrightEnvironment, type PlaywrightInstall } from './locate.js';
import { runPlaywright } from './process.js';
import { BatchTracker, IDLE_LIMIT_MS, type BatchEnd } from './tracker.js';
import type { WrapOptions } from './wrap-config.cjs';
import type { BrowserOptions } from './browser-choice.cjs';

const REPORTER = fileURLToPath(new URL('./reporter.js', import.meta.url));
const WRAP_CONFIG = fileURLToPath(new URL('./wrap-config.cjs', import.meta.url));

export interface PlaywrightExecutorOptions {
  /** The operator's Chromium (RUNSET_CHROMIUM / --chromium), for every Chromium project; undefined: what the suite's Playwright would launch, else the system Chromium. */
  chromium?: string;
  /** The system Chromium run when the browser Playwright would launch is missing; default /usr/bin/chromium. */
  systemChromium?: string;
  /** Whom the Playwright process runs as and what it must not see (../environment.ts). */
  policy?: TestProcessPolicy;
}

interface Setup {
  chromium: string | undefined;
  systemChromium: string;
  policy: TestProcessPolicy;
}

export function createPlaywrightExecutor(options: PlaywrightExecutorOptions = {}): Executor<PlaywrightTestSpec> {
  const setup: Setup = { chromium: options.chromium, systemChromium: options.systemChromium ?? DEFAULT_CHROMIUM, policy: options.policy ?? {} };
  return Object.freeze({
    type: 'playwright' as const,
    // One case outside any batch (artifacts are not kept on this path).
    run: (spec: PlaywrightTestSpec, ctx: ExecutionContext) => runAlone('playwright', spec, ctx, (specs, batch) => runBatch(specs, batch, setup)),
    runBatch: (specs: PlaywrightTestSpec[], ctx: BatchExecutionContext) => runBatch(specs, ctx, setup),
  });
}

async function runBatch(specs: PlaywrightTestSpec[], ctx: BatchExecutionContext, setup: Setup): Promise<void> {
  const { chromium } = setup;
  const policy = memberPolicy(setup.policy, ctx.runAs);
  const problem = preflight(specs, chromium);
  if (problem !== null) return failAll(specs, ctx, problem);
  const first = specs[0] as PlaywrightTestSpec;
  let install: PlaywrightInstall;
  try {
    install = await locateFramework(playwrightAdapter, first);
  } catch (error) {
    return failAll(specs, ctx, (error as Error).message);
  }
  const tracker = new BatchTracker(specs, ctx);
  const env = playwrightEnvironment(install, first.dir, ctx.variables, policy);
  const browser = await browserOptions(specs, setup, install.cli);
  const args = await prepareRun(specs, ctx, { browser, cli: install.cli, version: install.version, missingFfmpeg: missingFfmpeg(install.cli, env, first.dir) });
  // The one poller of the tracker (../live-tracker.ts): stops the runner when it hangs, idles, or never says a word.
  const guard = guardBatch(tracker, ctx.signal);
  const running = runPlaywright(install.cli, args, {
    cwd: first.dir,
    env,
    eventFile: path.join(ctx.workDir, 'reporter-events.jsonl'),
    onEvent: (event) => tracker.handle(event),
    runAs: policy.runAs,
    containment: policy.containment,
    // Killed at once on abort (shutdown, lost lease) and when the guard says why.
    signal: AbortSignal.any([ctx.signal, guard.signal]),
    // The run's folder becomes the test user's (its reporter writes the event file, Playwright its output there).
    beforeStart: () => handOver(ctx.workDir, policy.runAs),
  });
  let exit: TestProcessExit;
  try {
    exit = await running;
  } finally {
    guard.dispose();
  }
  const stop = guard.reason;
  // Nothing began: it said nothing at all; its log is the process's own.
  if (stop?.kind === 'silent') return failSilentStart(specs, ctx, `${playwrightAdapter.title} ${install.version}`, PROCESS_START_MS, exit.log);
  if (stop?.kind === 'killed') return tracker.finish(stop);
  if (stop?.kind === 'idle') return tracker.finish({ kind: 'exited', code: null, signal: 'SIGKILL', log: `${IDLE_LOG}\n${exit.log}` });
  tracker.finish(exit.stopped === 'aborted' ? { kind: 'aborted' } : { kind: 'exited', code: exit.code, signal: exit.signal, log: exit.log });
}

const IDLE_LOG = `Playwright reported nothing for ${IDLE_LIMIT_MS / 60_000} minutes while tests were waiting to begin (a global setup or webServer that never finished?); runset stopped it`;

/** Why the guard stops a batch: a hung case (already ended by the hang guard), a batch idle past its limit, a runner silent from its start. */
type BatchStop = Extract<BatchEnd, { kind: 'killed' }> | { kind: 'idle' } | { kind: 'silent' };

/** Watches the batch while its runner runs: the hang guard and idle limit (./tracker.ts), and before its first word the start guard's silence. */
function guardBatch(tracker: BatchTracker, signal: AbortSignal): Guard<BatchStop> {
  return guard((): BatchStop | undefined => {
    // An abort is the worker's: nothing the runner does while it dies is judged.
    if (signal.aborted) return undefined;
    const hung = tracker.overdue();
    if (hung) return { kind: 'killed', reason: tracker.failHung(hung.index) };
    // Before its first word, idle is the tracker's silent() (../live-tracker.ts).
    if (tracker.idle()) return tracker.started ? { kind: 'idle' } : { kind: 'silent' };
    return undefined;
  });
}

/** Problems that fail every case before anything starts: no discovered case, no Chromium where the operator said it is. */
function preflight(specs: readonly PlaywrightTestSpec[], chromium: string | undefined): string | null {
  if (specs.length === 0) return null;
  if (specs.some((s) => s.case === undefined)) return 'not a discovered Playwright test case (the config entry was never listed)';
  if (chromium !== undefined && specs.some((s) => s.case?.browser === 'chromium')) return browserProblem(chromium);
  return null;
}

/** What the wrapper needs to choose each Chromium project's browser; versions only asked when a Chromium project is in the batch. */
async function browserOptions(specs: readonly PlaywrightTestSpec[], setup: Setup, cli: string): Promise<BrowserOptions> {
  const chromiumCases = specs.some((s) => s.case?.browser === 'chromium');
  const known = async (file: string) => ({ path: file, version: chromiumCases ? await chromiumVersion(file) : undefined });
  const options: BrowserOptions = { system: await known(setup.systemChromium), rootArgs: [...CHROMIUM_ARGS], cli };
  if (setup.chromium !== undefined) options.explicit = await known(setup.chromium);
  return options;
}

/** Writes the test list and the wrapper config into the batch's folder; returns the CLI arguments. */
async function prepareRun(
  specs: readonly PlaywrightTestSpec[],
  ctx: BatchExecutionContext,
  { browser, cli, version, missingFfmpeg }: { browser: BrowserOptions; cli: string; version: string; missingFfmpeg: string | undefined },
): Promise<string[]> {
  const first = specs[0] as PlaywrightTestSpec;
  const list = path.join(ctx.workDir, 'test-list.txt');
  await writeFile(list, specs.map(testListLine).join('\n') + '\n');
  const options: WrapOptions = { configDir: path.dirname(first.config), chromium: browser, playwrightTest: path.dirname(cli) };
  if (missingFfmpeg !== undefined) options.missingFfmpeg = missingFfmpeg;
  const wrapper = await writeWrapper(first.config, ctx.workDir, options);
  const args = ['test', '-c', wrapper, `--reporter=${REPORTER}`, ...selectionArgs(specs, version, list), '--output', path.join(ctx.workDir, 'output')];
  // Every case gets a real result: no stopping after N failures, nothing left unrun.
  args.push(`--workers=${Math.max(1, ctx.parallelism)}`, '--max-failures=0', '--pass-with-no-tests');
  if (first.retriesOverride) args.push(`--retries=${first.retries}`);
  if (first.timeoutOverride) args.push(`--timeout=${Math.round(first.timeoutSeconds * 1000)}`);
  return args;
}

/**
 * Which cases to run: a --test-list file (Playwright 1.56 and later), else —
 * for a suite's own older Playwright — each project as `--project=<name>`, then
 * each case's file:line. The `=` matters: before 1.56 `--project` takes every
 * word after it, so `--project chromium a.spec.ts:3` asks for a project named
 * `a.spec.ts:3`. Every project with every location may also run tests the batch
 * does not hold (another project's test on a listed line): their results are ignored.
 * An unnamed project cannot be asked for by name: a batch holding one names none.
 */
export function selectionArgs(specs: readonly PlaywrightTestSpec[], version: string, listFile: string): string[] {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major > 1 || (major === 1 && minor >= 56)) return ['--test-list', listFile];
  const projects = new Set(specs.flatMap((s) => (s.case ? [s.case.project] : [])));
  const locations = new Set(specs.flatMap((s) => (s.case ? [`${s.case.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${s.case.line}`] : [])));
  const byName = projects.has('') ? [] : [...projects].map((p) => `--project=${p}`);
  return [...byName, ...locations];
}

/**
 * One line of Playwright's --test-list: `[project] › file › describe › title`,
 * matched as a prefix of a test's titles. A title holding the separator cannot
 * be written, so the line stops before it (its siblings run too; their results
 * are ignored).
 */
export function testListLine(spec: PlaywrightTestSpec): string {
  const c = spec.case;
  if (!c) return '';
  const titles: string[] = [];
  for (const title of c.titles) {
    if (title.includes('›') || title !== title.trim()) break;
    titles.push(title);
  }
  return caseName({ project: c.project || undefined, file: c.file, titles });
}

/** The generated config: CommonJS or ES module like the suite's own, so Playwright loads the suite's as it would. */
async function writeWrapper(userConfig: string, workDir: string, options: WrapOptions): Promise<string> {
  const json = JSON.stringify(options);
  if (isModuleFile(userConfig)) {
    const file = path.join(workDir, 'playwright.runset.config.mjs');
    await writeFile(file, [
      '// Generated by runset for one batch (src/executors/playwright/wrap-config.cts).',
      // Through createRequire, not `import`: a CommonJS module imported by an ES module under
      // Playwright's ESM loader (1.49 on Node 20) hangs at its own first require of a file.
      "import { createRequire } from 'node:module';",
      `const { wrapConfig } = createRequire(import.meta.url)(${JSON.stringify(WRAP_CONFIG)});`,
      `import * as user from ${JSON.stringify(pathToFileURL(userConfig).href)};`,
      `export default wrapConfig(user, ${json});`,
    ].join('\n'));
    return file;
  }
  const file = path.join(workDir, 'playwright.runset.config.cjs');
  await writeFile(file, [
    '// Generated by runset for one batch (src/executors/playwright/wrap-config.cts).',
    `const { wrapConfig } = require(${JSON.stringify(WRAP_CONFIG)});`,
    `module.exports = wrapConfig(require(${JSON.stringify(userConfig)}), ${json});`,
  ].join('\n'));
  return file;
}

/** Playwright's rule: .mjs/.mts are modules, .cjs/.cts are not, else the nearest package.json's "type". */
export function isModuleFile(file: string): boolean {
  if (/\.m[jt]s$/.test(file)) return true;
  if (/\.c[jt]s$/.test(file)) return false;
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: unknown }).type === 'module';
      } catch {
        return false;
      }
    }
    if (path.dirname(dir) === dir) return false;
  }
}
