/**
 * The cases of a member's result (a command's `junit:` report) as test history
 * sees them: each case is a test of its own, named `<member name> › <case
 * name>`, whose runs are the members that reported it. A skipped case ran
 * nothing, so it has no run in history (as a cancelled member counts nothing);
 * a passed case is a SUCCESS and a failed one a FAIL, judged for flakiness by
 * the same rule as members (src/history/flakiness.ts), with one attempt: a
 * report does not say a case was retried. The stores write these rows with the
 * member's outcome; the dashboard links a case to its test page by the name.
 */
import type { ResultCase } from './types.js';

/** Between a member's name and its case's name in the case's test name. */
export const CASE_NAME_JOINER = ' › ';

export function caseTestName(memberName: string, caseName: string): string {
  return `${memberName}${CASE_NAME_JOINER}${caseName}`;
}

/** The same name in SQL, from two SQL text expressions (both stores' `||`), so the rule stays here. */
export function caseTestNameSql(memberName: string, caseName: string): string {
  return `${memberName} || '${CASE_NAME_JOINER}' || ${caseName}`;
}

/** The executor kind a case's test shows in the tests list. */
export const CASE_TEST_TYPE = 'junit';

/** One case's run in history, before it has a member's name and end. */
export interface HistoryCase {
  /** Its place in the report (0-based): the key of its row beside the member's id. */
  position: number;
  name: string;
  result: 'SUCCESS' | 'FAIL';
  durationMs: number;
  error: string | null;
}

/** The runs a member's cases add to history: every case but the skipped ones, in report order. */
export function historyCases(cases: readonly ResultCase[] | undefined): HistoryCase[] {
  return (cases ?? []).flatMap((c, position): HistoryCase[] =>
    c.status === 'skipped' ? [] : [{ position, name: c.name, result: c.status === 'passed' ? 'SUCCESS' : 'FAIL', durationMs: c.durationMs, error: c.error }],
  );
}
