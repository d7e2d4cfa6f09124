/**
 * Selection on create (`select`): the one rule for which of the tests an
 * environment declares a set runs. A filter at plan time, over the tests of
 * the set's suite (the server's config or an uploaded version), so every test
 * type is selected the same way:
 *
 * - `tags`: any of them, among the test's `tags` (config), and for a Playwright
 *   case also its own (`@smoke` in its or its describes' titles, `tag:`
 *   annotations). A leading `@` is ignored on both sides.
 * - `grep` / `grepInvert`: a regular expression the name must / must not match
 *   (the name as members show it: a Playwright case's is `file › describe › title`).
 * - `names`: exact names.
 * - `projects`: Playwright cases of these projects; other tests have no project.
 * The fields given AND together; none given selects every test.
 *
 * A user's regular expression runs on the API's event loop and JavaScript's
 * has no timeout, so a pattern that backtracks catastrophically (`(a+)+$`)
 * could stall the server. Patterns are bounded in length (LIMITS in
 * src/core/wire.ts) and all matching runs inside a vm script with a short
 * deadline: V8 interrupts a running regular expression when it expires, and
 * the pattern is refused (400) rather than the server stalled. The create and
 * rerun routes charge a request that carries patterns to the key's sets per
 * minute before they run, so even refused ones hold the loop at most
 * MATCH_DEADLINE_MS × sets per minute (50 ms × 120 = 6 s a minute, against
 * 30 s at the 250 ms it was). The deadline is wall-clock time, V8's watchdog
 * thread included: an ordinary pattern over a thousand names takes well under
 * a millisecond on an idle machine, but 20 ms was overrun on a loaded one, so
 * it is not cut finer. (A worker thread would free the loop entirely, at the
 * price of making planning asynchronous.)
 */
import { createContext, Script } from 'node:vm';
import { echo, RunsetError } from '../core/errors.js';
import type { TestSelection, TestSpec } from '../core/types.js';

/** The longest all of a selection's patterns may take over all of an environment's names: what one request may hold the event loop. */
export const MATCH_DEADLINE_MS = 50;

/** Compiled once, run in one context made once: only the matching itself counts against the deadline. */
const MATCHER = new Script('names.map((name) => (grep === undefined || grep.test(name)) && (grepInvert === undefined || !grepInvert.test(name)))');
const MATCH_CONTEXT = createContext({});
// Run once at load, without a deadline, so a first request's is not spent compiling the matcher.
Object.assign(MATCH_CONTEXT, { names: ['warm'], grep: /warm/, grepInvert: undefined });
MATCHER.runInContext(MATCH_CONTEXT);

/** The tests `select` keeps, in their order; refuses an invalid pattern (400) and a selection that keeps none (422). */
export function selectTests<T extends TestSpec>(tests: readonly T[], select: TestSelection | null | undefined, env: string): T[] {
  if (!select || !isSelecting(select)) return [...tests];
  const grep = compile(select.grep, 'grep');
  const grepInvert = compile(select.grepInvert, 'grepInvert');
  const grepped = grepMatches(tests.map((t) => t.name), grep, grepInvert);
  const tags = select.tags ? new Set(select.tags.map(bareTag)) : undefined;
  const names = select.names ? new Set(select.names) : undefined;
  const projects = select.projects ? new Set(select.projects) : undefined;
  const kept = tests.filter(
    (test, i) =>
      grepped[i] === true &&
      (!tags || testTags(test).some((tag) => tags.has(tag))) &&
      (!names || names.has(test.name)) &&
      (!projects || (test.type === 'playwright' && test.case !== undefined && projects.has(test.case.project))),
  );
  if (kept.length === 0) {
    throw new RunsetError(
      'no_tests_selected',
      `select ${describeSelection(select)} matches none of the ${tests.length} test${tests.length === 1 ? '' : 's'} environment "${env}" has; an empty set must not pass (its tests are listed by GET /api/v0/tests?env=${encodeURIComponent(env)})`,
    );
  }
  return kept;
}

/** True when the selection narrows anything (a stored `{}`, from before it was refused, selects every test). */
export function isSelecting(select: TestSelection): boolean {
  return [select.tags, select.grep, select.grepInvert, select.names, select.projects].some((field) => field !== undefined);
}

/** Refuses a `select` that names no field: it would narrow nothing, so it is a mistake (leave select out to run every test). */
export function refuseEmptySelection(select: TestSelection | null | undefined): void {
  if (select && !isSelecting(select)) {
    throw new RunsetError('invalid_body', 'select is empty: it must hold at least one of tags, grep, grepInvert, names or projects (the tests it keeps); leave select out to run every test');
  }
}

/** True when the selection holds a regular expression: matching it costs time on the API's event loop (see above). */
export function hasPatterns(select: TestSelection | null | undefined): boolean {
  return select?.grep !== undefined || select?.grepInvert !== undefined;
}

/** The selection in a few words, for messages and pages: `tags smoke, fast; grep "checkout"`. */
export function describeSelection(select: TestSelection): string {
  const parts: string[] = [];
  const list = (values: readonly string[]): string =>
    values.slice(0, 3).map((v) => JSON.stringify(echo(v))).join(', ') + (values.length > 3 ? ` and ${values.length - 3} more` : '');
  if (select.tags) parts.push(`tags ${list(select.tags)}`);
  if (select.grep !== undefined) parts.push(`grep ${JSON.stringify(echo(select.grep))}`);
  if (select.grepInvert !== undefined) parts.push(`grepInvert ${JSON.stringify(echo(select.grepInvert))}`);
  if (select.names) parts.push(`names ${list(select.names)}`);
  if (select.projects) parts.push(`projects ${list(select.projects)}`);
  return parts.join('; ') || '(none)';
}

/** A test's tags without `@`: its config tags, and a listed case's own (Playwright's, Vitest's). */
export function testTags(test: TestSpec): string[] {
  const own = test.type === 'http' || test.type === 'command' ? [] : (test.case?.tags ?? []);
  return [...test.tags, ...own].map(bareTag);
}

function bareTag(tag: string): string {
  return tag.startsWith('@') ? tag.slice(1) : tag;
}

function compile(pattern: string | undefined, field: 'grep' | 'grepInvert'): RegExp | undefined {
  if (pattern === undefined) return undefined;
  try {
    return new RegExp(pattern);
  } catch (error) {
    throw new RunsetError('invalid_body', `select.${field} is not a valid JavaScript regular expression (${(error as Error).message.replace(/^Invalid regular expression: /, '')}); expected a pattern such as "checkout|login"`);
  }
}

/** Per name, whether it passes grep and grepInvert; run under MATCH_DEADLINE_MS (see the file's comment). */
function grepMatches(names: readonly string[], grep: RegExp | undefined, grepInvert: RegExp | undefined): boolean[] {
  if (!grep && !grepInvert) return names.map(() => true);
  Object.assign(MATCH_CONTEXT, { names, grep, grepInvert });
  try {
    return MATCHER.runInContext(MATCH_CONTEXT, { timeout: MATCH_DEADLINE_MS }) as boolean[];
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw error;
    throw new RunsetError(
      'invalid_body',
      `select.grep or select.grepInvert took over ${MATCH_DEADLINE_MS} ms on ${names.length} test names (a pattern that backtracks, such as "(a+)+$"); expected a simpler pattern, or select by tags or names`,
    );
  } finally {
    Object.assign(MATCH_CONTEXT, { names: undefined, grep: undefined, grepInvert: undefined }); // nothing kept alive between requests
  }
}
