/**
 * A listed case's key and name, one rule for every kind of listed entry
 * (Playwright's, each framework's). A case is where it is: its project
 * (Playwright's; a framework has none), its file relative to the entry, its
 * describe titles then its own. Imports nothing: runset's Playwright reporter
 * (./playwright/reporter.ts) loads it inside the suite's Playwright process.
 */

/** The separator of a case's name parts, as Playwright writes them. */
export const NAME_SEPARATOR = ' › ';

export interface CasePath {
  /** Playwright's project ('' when unnamed); absent for a framework's case. */
  readonly project?: string;
  readonly file: string;
  readonly titles: readonly string[];
}

/** The key a case is matched by between the listing, the members, the reporter's events and a report. */
export function caseKey(c: CasePath): string {
  return JSON.stringify(c.project === undefined ? [c.file, ...c.titles] : [c.project, c.file, ...c.titles]);
}

/** `[project] › file › describe › title`: a case as people read it, its project shown when given. */
export function caseName(c: CasePath): string {
  return [...(c.project === undefined ? [] : [`[${c.project}]`]), c.file, ...c.titles].join(NAME_SEPARATOR);
}
