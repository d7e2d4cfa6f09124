/**
 * The config runset hands Playwright: the suite's own config, loaded as
 * Playwright would load it, with what a runset worker needs on top —
 *
 * - for every Chromium project, always headless, the browser ./browser-choice.cts
 *   picks (what `npx playwright test` would launch, else the system Chromium;
 *   the operator's RUNSET_CHROMIUM first), named in every member's output;
 * - a screenshot kept for every failure; the suite's own `trace` setting, else
 *   Playwright's starter default `on-first-retry` (a trace of a retried failure,
 *   at no cost to a test that passes first time: bench/README.md);
 * - video as the suite asks, unless Playwright's ffmpeg is missing: then video
 *   is off for the batch and every member of a project that asked says so,
 *   rather than every test failing on the missing executable;
 * - in each Playwright worker, a pulse that tells runset's hang guard the
 *   worker is alive and what its running test's timeout is now (startPulse).
 *
 * The generated wrapper lives in a work folder, not beside the suite (which may
 * be read-only), so every path the suite wrote relative to its config's folder
 * is made absolute here, exactly as Playwright would have resolved it.
 *
 * A CommonJS module (.cts → .cjs) so both CommonJS and ES module wrappers can load it.
 */
import * as path from 'node:path';
import { appendFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chooseBrowser, type BrowserOptions } from './browser-choice.cjs';

export interface WrapOptions {
  /** Folder of the suite's playwright.config.* */
  configDir: string;
  chromium: BrowserOptions;
  /** Where the suite's Playwright looks for ffmpeg, when nothing is there: video cannot be recorded. */
  missingFfmpeg?: string;
  /** The @playwright/test package folder running the suite: its `test.info()` feeds the workers' pulses. */
  playwrightTest?: string;
}

/** How often each Playwright worker says it is alive (tracker.ts: QUIET_MS is how long a silence may last). */
const PULSE_MS = 1000;
/** A worker may load the config more than once: one pulse each. */
let pulsing = false;

/** Read by runset's reporter side (ReporterEvent `notice`); named here too, since this file imports nothing of runset's. */
const REPORTER_FILE_ENV = 'RUNSET_REPORTER_FILE';

type Json = Record<string, unknown>;

function list(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? (value as unknown[]) : undefined;
}

const KEEPS_SCREENSHOT = new Set(['on', 'only-on-failure', 'on-first-failure']);

export function wrapConfig(loaded: unknown, options: WrapOptions): Json {
  const user = unwrapDefault(loaded);
  const dir = options.configDir;
  const config: Json = { ...user, ...resolvePaths(user, dir) };
  // Playwright's default when no testDir is given: respect .gitignore. Giving an
  // absolute testDir below would silently turn that off.
  config.respectGitIgnore = user.respectGitIgnore ?? user.testDir === undefined;
  config.testDir = path.resolve(dir, str(user.testDir) ?? '.');
  for (const key of ['globalSetup', 'globalTeardown'] as const) {
    const value = user[key];
    if (typeof value === 'string') config[key] = resolveScript(dir, value);
    else config[key] = list(value)?.map((v) => (typeof v === 'string' ? resolveScript(dir, v) : v)) ?? value;
  }
  if (typeof user.tsconfig === 'string') config.tsconfig = path.resolve(dir, user.tsconfig);
  if (user.webServer !== undefined) {
    const servers = list(user.webServer) ?? [user.webServer];
    const resolved = servers.map((s) => (isRecord(s) ? { ...s, cwd: path.resolve(dir, str(s.cwd) ?? '.') } : s));
    config.webServer = Array.isArray(user.webServer) ? resolved : resolved[0];
  }
  const topUse = isRecord(user.use) ? user.use : {};
  const projects = list(user.projects);
  // Only projects run: with none declared, the top level is the one project (unnamed) that does.
  const said: Said = { videoOff: [], browsers: [] };
  config.use = runsetUse(topUse, {}, options, said, projects ? undefined : '');
  if (projects) config.projects = projects.map((p) => (isRecord(p) ? wrapProject(p, user, topUse, options, said) : p));
  if (said.videoOff.length > 0 && options.missingFfmpeg) {
    tellRunset(`video is off for this run: the suite asks for video, and Playwright records it with its own ffmpeg, which is not at ${options.missingFfmpeg} (see "Video" in runset's README)`, said.videoOff);
  }
  // Test workers load the config too: the runner's word on the browsers is enough.
  if (process.env.TEST_WORKER_INDEX === undefined) said.browsers.forEach((text) => tellRunset(text));
  startPulse(options.playwrightTest);
  return config;
}

/**
 * In each Playwright worker (the config is loaded there too), a line every
 * PULSE_MS while its event loop runs: the worker slot, and the running test's
 * id and current timeout (test.setTimeout, test.slow() change it at run time,
 * unseen by the reporter). A worker stuck where Playwright's own timer cannot
 * fire falls silent: that is what runset's hang guard waits for (tracker.ts).
 */
function startPulse(playwrightTest: string | undefined): void {
  const slot = process.env.TEST_PARALLEL_INDEX || process.env.TEST_WORKER_INDEX;
  const file = process.env[REPORTER_FILE_ENV];
  if (!file || !slot || pulsing) return; // the runner (no worker slot), or a worker already pulsing
  const lane = Number(slot);
  pulsing = true;
  let info: (() => { testId?: string; timeout: number }) | undefined;
  try {
    // The very module instance the suite's tests run with: its test.info() is the running test's.
    const loaded = playwrightTest === undefined ? undefined : (createRequire(__filename)(playwrightTest) as { test?: { info?: () => { testId?: string; timeout: number } } });
    info = loaded?.test?.info?.bind(loaded.test);
  } catch {
    info = undefined; // the pulse still says the worker lives; the timeout stays the one the reporter saw
  }
  const timer = setInterval(() => {
    const pulse: Json = { type: 'pulse', lane };
    try {
      const current = info?.();
      if (current) Object.assign(pulse, { testId: current.testId, timeoutMs: current.timeout });
    } catch {
      // between tests: no test.info()
    }
    try {
      appendFileSync(file, JSON.stringify(pulse) + '\n');
    } catch {
      clearInterval(timer); // the batch's folder is gone: the run is over
    }
  }, PULSE_MS);
  timer.unref(); // never what keeps a worker alive
}

/**
 * A line for every member's output, through the reporter's event file. The
 * config is loaded by the runner and by each of its workers, so this may come
 * several times: runset keeps one of each.
 */
function tellRunset(text: string, projects?: string[]): void {
  const file = process.env[REPORTER_FILE_ENV];
  if (file) appendFileSync(file, JSON.stringify({ type: 'notice', text, ...(projects ? { projects } : {}) }) + '\n');
}

/** What the members are told: which projects asked for video that was turned off; which browser each project runs. */
interface Said {
  videoOff: string[];
  browsers: string[];
}

function wrapProject(project: Json, user: Json, topUse: Json, options: WrapOptions, said: Said): Json {
  const dir = options.configDir;
  const out: Json = { ...project, ...resolvePaths(project, dir) };
  if (typeof project.testDir === 'string') out.testDir = path.resolve(dir, project.testDir);
  out.respectGitIgnore = project.respectGitIgnore ?? user.respectGitIgnore ?? (project.testDir === undefined && user.testDir === undefined);
  out.use = runsetUse(isRecord(project.use) ? project.use : {}, topUse, options, said, str(project.name) ?? '');
  return out;
}

/** snapshotDir and toHaveScreenshot stylePath, relative to the config's folder. */
function resolvePaths(scope: Json, dir: string): Json {
  const out: Json = {};
  if (typeof scope.snapshotDir === 'string') out.snapshotDir = path.resolve(dir, scope.snapshotDir);
  const expect = isRecord(scope.expect) ? scope.expect : undefined;
  const shot = expect && isRecord(expect.toHaveScreenshot) ? expect.toHaveScreenshot : undefined;
  if (expect && shot && shot.stylePath !== undefined) {
    const paths = list(shot.stylePath) ?? [shot.stylePath];
    out.expect = { ...expect, toHaveScreenshot: { ...shot, stylePath: paths.map((p) => (typeof p === 'string' ? path.resolve(dir, p) : p)) } };
  }
  return out;
}

/**
 * `use` with runset's browser and failure artifacts; `inherited` is the top-level
 * `use` a project's own one is merged over. `project`: the project's name ('' for
 * the one unnamed project of a config without projects), undefined for the
 * top-level `use` of a config with projects (only projects run, and each names
 * its own browser); a project joins `said.videoOff` when its effective setting
 * asked for video and it was turned off.
 */
function runsetUse(use: Json, inherited: Json, options: WrapOptions, said: Said, project: string | undefined): Json {
  const out: Json = { ...use, headless: true };
  const effective = { ...inherited, ...use };
  // Tracing every test so that any failure has a trace cost passing tests 8–45 %
  // more time; a trace of the retry of a failure costs the tests that pass nothing.
  // A suite that chose (even `off`) keeps its choice.
  if (effective.trace === undefined) out.trace = 'on-first-retry';
  const video = effective.video;
  const videoMode = isRecord(video) ? str(video.mode) : str(video);
  if (options.missingFfmpeg !== undefined && (videoMode ?? 'off') !== 'off') {
    out.video = 'off';
    if (project !== undefined) said.videoOff.push(project);
  }
  const shot = effective.screenshot;
  const shotMode = isRecord(shot) ? str(shot.mode) : str(shot);
  if (!KEEPS_SCREENSHOT.has(shotMode ?? 'off')) out.screenshot = isRecord(shot) ? { ...shot, mode: 'only-on-failure' } : 'only-on-failure';
  const browser = str(effective.browserName) ?? str(effective.defaultBrowserType) ?? 'chromium';
  if (browser === 'chromium') {
    // Merged by hand: Playwright replaces a project's launchOptions wholesale, so
    // the top-level ones (slowMo…) must be carried into the project's.
    const inheritedLaunch = isRecord(inherited.launchOptions) ? inherited.launchOptions : {};
    const ownLaunch = isRecord(use.launchOptions) ? use.launchOptions : {};
    const launch = { ...inheritedLaunch, ...ownLaunch };
    const channel = str(effective.channel) ?? str(launch.channel);
    const choice = chooseBrowser({ executablePath: launch.executablePath, channel, args: list(launch.args) ?? [] }, options.chromium);
    out.launchOptions = { ...launch, executablePath: choice.executablePath, channel: choice.channel, args: choice.args };
    out.channel = choice.channel;
    if (project !== undefined) said.browsers.push(...choice.notices.map((n) => (project === '' ? n : `project ${project}: ${n}`)));
  }
  return out;
}

/** As Playwright reads a config module: its default export, or the module object itself. */
function unwrapDefault(loaded: unknown): Json {
  if (isRecord(loaded) && 'default' in loaded) return isRecord(loaded.default) ? loaded.default : {};
  return isRecord(loaded) ? { ...loaded } : {};
}

/** As Playwright resolves a global setup: a file beside the config, else a package found from there. */
function resolveScript(dir: string, script: string): string {
  const local = path.resolve(dir, script);
  if (existsSync(local)) return local;
  try {
    return require.resolve(script, { paths: [dir] });
  } catch {
    return local; // Playwright reports the missing file itself
  }
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
