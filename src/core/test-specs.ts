/**
 * The tests as declared in runset.config.yaml and frozen into each member: one
 * shape per `type:` (src/config/suite-test-types.ts builds them), apart from
 * ./types.ts, which re-exports them, to keep each file short.
 */

// ── Tests, as declared in runset.config.yaml and frozen into each member ──────

export interface TestCommon {
  /** Unique in the config. */
  name: string;
  /** Environments this test runs in; `undefined` = every environment. */
  environments?: string[];
  tags: string[];
  timeoutSeconds: number;
  /** Extra tries after a failed one (0 = run once). */
  retries: number;
}

export interface HttpTestSpec extends TestCommon {
  type: 'http';
  request: {
    method: string;
    /** May hold `{{NAME}}` placeholders, substituted from the set's variables. */
    url: string;
    headers?: Record<string, string>;
    body?: string | Record<string, unknown> | unknown[];
  };
  expect: {
    /** Expected status; undefined = any 2xx. */
    status?: number;
    bodyContains?: string;
    /** The response body must be JSON containing this value (objects match as subsets). */
    json?: unknown;
  };
}

export interface CommandTestSpec extends TestCommon {
  type: 'command';
  /** argv — never a shell string. */
  run: string[];
  /** Absolute working directory (resolved from the config file's folder at load). */
  cwd: string;
  /** A JUnit XML file or glob the command writes, relative to `cwd`: its `<testcase>`s become cases of the member's result. */
  junit?: string;
  /** Globs, relative to `cwd`, of files the command writes that are kept as the member's artifacts (`artifacts:`). */
  artifacts?: string[];
}

/**
 * A Playwright entry, and — once discovery has listed its folder — one of
 * its test cases. The config entry becomes one member per case; the cases of a
 * set that share an entry run batched in one Playwright process, whatever their project.
 */
export interface PlaywrightTestSpec extends TestCommon {
  type: 'playwright';
  /** Absolute folder of the suite (the entry's `dir`). */
  dir: string;
  /** Absolute path of its playwright.config.* file. */
  config: string;
  /** Only cases matching this regular expression (Playwright's --grep). */
  grep?: string;
  /** Only this Playwright project. */
  project?: string;
  /** Most Playwright workers one batch of this entry may use; unset: half the worker's cores, as Playwright does. */
  workers?: number;
  /** True when runset's config set timeoutSeconds: Playwright is told to use it (--timeout). */
  timeoutOverride: boolean;
  /** True when runset's config set retries: Playwright is told to use them (--retries). */
  retriesOverride: boolean;
  /** The one test case this member runs; absent on the entry itself, before discovery. */
  case?: PlaywrightCase;
}

/** One Playwright test case, as `playwright test --list` reports it. */
export interface PlaywrightCase {
  /** Name of the config entry it was listed from. */
  entry: string;
  /** Playwright project name ('' when the config has no named project). */
  project: string;
  /** Browser of that project (chromium unless the project says otherwise). */
  browser: string;
  /** Spec file relative to Playwright's rootDir, with / separators. */
  file: string;
  line: number;
  /** describe titles, then the test's own title. */
  titles: string[];
  /**
   * Its Playwright tags without the `@` (from `@tag` in its and its describes'
   * titles, and `tag:` annotations), as the listing reports them. Absent: none,
   * or listed before runset read them.
   */
  tags?: string[];
  /**
   * Fixed TCP ports the suite's `webServer` listens on (its `port`, or the port
   * of its `url`), as listed: a host runs one batch of the suite at a time.
   * Absent: none.
   */
  webServerPorts?: number[];
}

/** The test frameworks runset lists and runs case by case besides Playwright (src/executors/frameworks/). */
export const FRAMEWORKS = Object.freeze(['vitest', 'jest', 'mocha', 'cucumber', 'pytest', 'newman'] as const);
export type FrameworkName = (typeof FRAMEWORKS)[number];

/**
 * A framework entry (`type: vitest`, `jest`, …) and, once listed, one of
 * its cases: like a Playwright entry, one member per case, the cases of one
 * entry batched into one framework process per share.
 */
export interface FrameworkTestSpec<F extends FrameworkName = FrameworkName> extends TestCommon {
  type: F;
  /** Absolute folder the framework runs in (the entry's `dir`). */
  dir: string;
  /** Extra arguments given to the framework for listing and runs (a config file, a project). */
  args: string[];
  /** Most framework workers one share may use; unset: half the worker's cores. */
  workers?: number;
  /** True when runset's config set timeoutSeconds / retries: the framework is told to use them. */
  timeoutOverride: boolean;
  retriesOverride: boolean;
  /** pytest: the Python interpreter that runs it (`python:`, default python3). */
  python?: string;
  /** Newman: the collection file, relative to `dir` (`collection:`). */
  collection?: string;
  /** Globs, relative to `dir`, of files the suite writes that are kept as its cases' artifacts (`artifacts:`). */
  artifacts?: string[];
  /** The one case this member runs; absent on the entry itself, before listing. */
  case?: FrameworkCase;
}

/** One case as its framework lists it: a file (relative to `dir`, / separators), describe titles then its own. */
export interface FrameworkCase {
  entry: string;
  file: string;
  titles: string[];
  tags?: string[];
  /** Its line in the file, where its framework selects cases by line (Cucumber's scenario or example row). */
  line?: number;
}

export type TestSpec = HttpTestSpec | CommandTestSpec | PlaywrightTestSpec | { [F in FrameworkName]: FrameworkTestSpec<F> }[FrameworkName];
export type TestType = TestSpec['type'];
