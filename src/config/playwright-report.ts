/**
 * The parts of Playwright's JSON report that listing fills in and discovery
 * reads, and a check of that shape. Reports listed by this process are trusted
 * as Playwright wrote them; an uploaded version's reports (LISTING_FILE) are
 * not, so entryCases checks every report before reading it: a field of the
 * wrong type would otherwise be a TypeError deep in the walk, and a deeply
 * nested one a stack overflow.
 */

export interface JsonReport {
  // `filteredProjects` carries each project's `use` (its browser); `projects` does not.
  // `webServer`: the config's, when it is a single one (Playwright reports a list as null).
  config?: { projects?: JsonProject[]; filteredProjects?: JsonProject[]; webServer?: unknown };
  suites?: JsonSuite[];
  errors?: Array<{ message?: string; stack?: string }>;
}
export interface JsonProject {
  name?: string;
  timeout?: number;
  retries?: number;
  use?: Record<string, unknown>;
}
export interface JsonSpec {
  title: string;
  file: string;
  line: number;
  /** Absent only in reports Playwright did not write; read as 0. */
  column?: number;
  /** Its tags without `@`: from titles (its describes' too) and `tag:` annotations. Absent: none (or an older report). */
  tags?: string[];
  /** Absent: the entry's own timeout applies. */
  tests: Array<{ projectName: string; timeout?: number }>;
}
export interface JsonSuite {
  title: string;
  file?: string;
  specs?: JsonSpec[];
  suites?: JsonSuite[];
}

/** Bounds no real suite reaches, so an uploaded report cannot ask for a billion retries or a year-long test. */
const MAX_RETRIES = 100;
const MAX_TIMEOUT_MS = 7 * 24 * 3600 * 1000;

/** More tags on one test, or longer, than anyone writes; bounds what an uploaded report makes each member carry. */
const MAX_TAGS = 100;
const MAX_TAG_LENGTH = 256;

/** Deeper describe() nesting than anyone writes; bounds the walk over an uploaded report. */
export const MAX_SUITE_DEPTH = 64;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): boolean => typeof value === 'number' && Number.isFinite(value);

/** What is wrong with `value` as a listing report (the first problem, with where), or null when it has the shape discovery reads. */
export function reportShapeProblem(value: unknown): string | null {
  if (!isObject(value)) return 'not a JSON object';
  const config = value.config;
  if (config !== undefined) {
    if (!isObject(config)) return '"config" is not an object';
    for (const key of ['projects', 'filteredProjects'] as const) {
      const projects = config[key];
      if (projects === undefined) continue;
      if (!Array.isArray(projects)) return `"config.${key}" is not a list`;
      const bad = projects.findIndex((p) => !isObject(p) || !optional(p.name, 'string') || !optional(p.timeout, 'number') || !optional(p.retries, 'number') || !(p.use === undefined || isObject(p.use)));
      if (bad >= 0) return `"config.${key}[${bad}]" is not a project (name, timeout, retries, use)`;
      const retries = projects.findIndex((p: Record<string, unknown>) => p.retries !== undefined && !(Number.isInteger(p.retries) && (p.retries as number) >= 0 && (p.retries as number) <= MAX_RETRIES));
      if (retries >= 0) return `"config.${key}[${retries}].retries" is not a whole number from 0 to ${MAX_RETRIES}`;
    }
  }
  if (value.errors !== undefined) {
    if (!Array.isArray(value.errors)) return '"errors" is not a list';
    if (value.errors.some((e) => !isObject(e) || !optional(e.message, 'string') || !optional(e.stack, 'string'))) return '"errors" holds something other than { message, stack }';
  }
  if (value.suites === undefined) return null;
  if (!Array.isArray(value.suites)) return '"suites" is not a list';
  return suitesProblem(value.suites);
}

/** Walks the suites without recursion (an upload chooses the depth), depth-first. */
function suitesProblem(roots: unknown[]): string | null {
  const stack: Array<{ suite: unknown; at: string; depth: number }> = roots.map((suite, i) => ({ suite, at: `suites[${i}]`, depth: 1 }));
  while (stack.length > 0) {
    const { suite, at, depth } = stack.pop()!;
    if (depth > MAX_SUITE_DEPTH) return `${at} is nested deeper than ${MAX_SUITE_DEPTH} levels`;
    if (!isObject(suite) || typeof suite.title !== 'string' || !optional(suite.file, 'string')) return `${at} is not a suite (title, file, specs, suites)`;
    if (suite.specs !== undefined) {
      if (!Array.isArray(suite.specs)) return `${at}.specs is not a list`;
      const bad = suite.specs.findIndex((spec) => !isSpec(spec));
      if (bad >= 0) return `${at}.specs[${bad}] is not a spec (title, file, line, column, tags, tests of projectName and timeout)`;
    }
    if (suite.suites !== undefined) {
      if (!Array.isArray(suite.suites)) return `${at}.suites is not a list`;
      suite.suites.forEach((child, i) => stack.push({ suite: child, at: `${at}.suites[${i}]`, depth: depth + 1 }));
    }
  }
  return null;
}

function isSpec(spec: unknown): boolean {
  return (
    isObject(spec) &&
    typeof spec.title === 'string' &&
    typeof spec.file === 'string' &&
    isCount(spec.line) &&
    optional(spec.column, 'number') &&
    (spec.tags === undefined || (Array.isArray(spec.tags) && spec.tags.length <= MAX_TAGS && spec.tags.every((t) => typeof t === 'string' && t.length <= MAX_TAG_LENGTH))) &&
    Array.isArray(spec.tests) &&
    spec.tests.every((t) => isObject(t) && typeof t.projectName === 'string' && (t.timeout === undefined || (isCount(t.timeout) && (t.timeout as number) <= MAX_TIMEOUT_MS)))
  );
}

function optional(value: unknown, type: 'string' | 'number'): boolean {
  return value === undefined || (type === 'number' ? isCount(value) : typeof value === type);
}

/**
 * Only what discovery reads of a report, in a fixed key order: what an upload
 * carries. Playwright's report also holds the time it was made, its duration
 * and the uploader's absolute paths (rootDir, configFile), which would make the
 * same suite a new version at every push and tell the server about the
 * uploader's disk.
 */
export function reportForUpload(report: JsonReport): JsonReport {
  const project = (p: JsonProject): JsonProject => ({ name: p.name, timeout: p.timeout, retries: p.retries, use: p.use });
  const suite = (s: JsonSuite): JsonSuite => ({
    title: s.title,
    file: s.file,
    specs: s.specs?.map((spec) => ({ title: spec.title, file: spec.file, line: spec.line, column: spec.column, tags: spec.tags, tests: spec.tests.map((t) => ({ projectName: t.projectName, timeout: t.timeout })) })),
    suites: s.suites?.map(suite),
  });
  return {
    config: {
      projects: report.config?.projects?.map(project),
      filteredProjects: report.config?.filteredProjects?.map(project),
      webServer: report.config?.webServer,
    },
    suites: report.suites?.map(suite),
    errors: report.errors,
  };
}
