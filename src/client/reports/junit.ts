/**
 * JUnit XML, the one test report format every CI system reads (GitHub via
 * report actions, GitLab `artifacts:reports:junit`, Jenkins, Azure, CircleCI).
 *
 * One testcase per member when the server lists members, else one testcase for
 * the whole set. Members that passed only after a retry are reported as passed
 * but marked flaky (a property and a system-out note): a retry must not hide an
 * unstable test. Members started more than once because a start was lost (a
 * lease that expired, a worker that gave them back) carry `starts` and
 * `restarts` properties and say why in system-out: at-least-once is not hidden,
 * and a pass after a lost lease is not called flaky. Members Playwright skipped (test.skip, test.fixme) are
 * `<skipped/>`: they passed by runset's states, but nothing of them ran.
 * Members still unfinished at a timeout are errors, not skips, so the report
 * never looks greener than the exit code.
 *
 * A member whose result has cases (a command's `junit:` report) also gets a
 * `<testsuite>` of its own, named after it, with each case a `<testcase>`
 * (failed cases a `<failure>` with their message, skipped ones `<skipped/>`):
 * the member's testcase stays the command's verdict, the suite says what its
 * report held. The root's totals count every suite's testcases.
 */
import { create } from 'xmlbuilder2';
import { isFlaky, isQuarantined, isSkipped, type TestRun } from '../types.js';
import { ranAgainText, wasRestarted } from '../../core/starts.js';
import { cleanText, countsOf, failedMembers, memberDurationMs, oneLine, outputTail, setDurationMs, skippedMembers, unfinishedMembers, type ReportInput } from './model.js';

/** xmlbuilder2 does not export its node type from the package root. */
type XMLBuilder = ReturnType<typeof create>;

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

/**
 * A member's properties: flaky and its attempts (a retry), quarantined (a
 * failure that does not fail the set), and its starts and restarts when a
 * start of it was lost (src/core/starts.ts). One <properties> element.
 */
function memberProperties(run: TestRun): Array<[string, string]> {
  const properties: Array<[string, string]> = [];
  if (isFlaky(run)) properties.push(['flaky', 'true'], ['attempts', String(run.attempts)]);
  if (run.status === 'FAIL' && isQuarantined(run)) properties.push(['quarantined', 'true']);
  if (wasRestarted(run)) properties.push(['starts', String(run.starts)], ['restarts', (run.restarts ?? []).join(', ')]);
  return properties;
}

function addMember(suite: XMLBuilder, run: TestRun, input: ReportInput): void {
  const testcase = suite.ele('testcase', { name: cleanText(run.name), classname: `runset.${input.env}.${run.type}`, time: seconds(memberDurationMs(run)) });
  const properties = memberProperties(run);
  if (properties.length > 0) {
    const list = testcase.ele('properties');
    for (const [name, value] of properties) list.ele('property', { name, value });
  }
  // Why it ran more than once, as Playwright notes a retry: a pass after a lost lease is not flaky.
  const ranAgain = wasRestarted(run) ? ranAgainText(run) : null;
  if (isFlaky(run)) {
    const note = [`flaky: passed after ${run.attempts} attempts`, ranAgain, run.output ? outputTail(run.output) : ''].filter(Boolean).join('\n\n');
    testcase.ele('system-out').txt(note);
    return;
  }
  if (isSkipped(run)) {
    testcase.ele('skipped', { message: 'skipped by Playwright' });
    return;
  }
  if (run.status === 'FAIL') {
    const message = oneLine(run.error ?? 'failed');
    const tail = outputTail(run.output);
    const body = [cleanText(run.error ?? 'failed'), run.attempts > 1 ? `(after ${run.attempts} attempts)` : '', ranAgain ?? '', tail ? `--- output (end) ---\n${tail}` : '']
      .filter(Boolean)
      .join('\n\n');
    testcase.ele('failure', { message: isQuarantined(run) ? `quarantined: ${message}` : message, type: 'FAIL' }).txt(body);
    return;
  }
  if (ranAgain !== null) testcase.ele('system-out').txt(ranAgain);
  if (run.status !== 'SUCCESS') {
    const why = input.outcome === 'TIMEOUT' ? 'not finished when the trigger timed out' : 'not finished';
    testcase.ele('error', { message: `${why} (status ${oneLine(run.status)})`, type: 'unfinished' });
  }
}

type CaseOf = NonNullable<TestRun['cases']>[number];

function caseCounts(cases: readonly CaseOf[]): { tests: number; failures: number; skipped: number; ms: number } {
  return {
    tests: cases.length,
    failures: cases.filter((c) => c.status === 'failed').length,
    skipped: cases.filter((c) => c.status === 'skipped').length,
    ms: cases.reduce((sum, c) => sum + c.durationMs, 0),
  };
}

/** The root's totals: the set's suite and every member's suite of cases. */
function withCaseTotals(totals: Record<'tests' | 'failures' | 'errors' | 'skipped' | 'time', string>, withCases: readonly TestRun[]): Record<string, string> {
  const sum = { tests: Number(totals.tests), failures: Number(totals.failures), skipped: Number(totals.skipped) };
  for (const run of withCases) {
    const c = caseCounts(run.cases ?? []);
    sum.tests += c.tests;
    sum.failures += c.failures;
    sum.skipped += c.skipped;
  }
  return { ...totals, tests: String(sum.tests), failures: String(sum.failures), skipped: String(sum.skipped) };
}

/** A member's cases as a suite of their own (see the file's comment). */
function addCases(root: XMLBuilder, run: TestRun, input: ReportInput, timestamp: string): void {
  const cases = run.cases ?? [];
  const c = caseCounts(cases);
  const suite = root.ele('testsuite', {
    name: cleanText(run.name), tests: String(c.tests), failures: String(c.failures), errors: '0', skipped: String(c.skipped), time: seconds(c.ms), timestamp,
  });
  suite.ele('properties').ele('property', { name: 'runset.testRunId', value: run.id });
  for (const kase of cases) {
    const testcase = suite.ele('testcase', { name: cleanText(kase.name), classname: `runset.${input.env}.${cleanText(run.name)}`, time: seconds(kase.durationMs) });
    if (kase.status === 'failed') testcase.ele('failure', { message: oneLine(kase.error ?? 'failed'), type: 'FAIL' }).txt(cleanText(kase.error ?? 'failed'));
    else if (kase.status === 'skipped') testcase.ele('skipped');
  }
}

/** Where the server does not list members: the set itself is the one testcase. */
function addWholeSet(suite: XMLBuilder, input: ReportInput): void {
  const counts = countsOf(input);
  const testcase = suite.ele('testcase', { name: `test run set ${input.setId} (env ${input.env})`, classname: `runset.${input.env}`, time: seconds(setDurationMs(input)) });
  if (input.outcome === 'FAIL') {
    testcase
      .ele('failure', { message: `${counts.failed} of ${counts.total} tests failed`, type: 'FAIL' })
      .txt('This server does not list the members of a set; see the runset server for which tests failed.');
  } else if (input.outcome === 'TIMEOUT') {
    testcase.ele('error', { message: `timed out: ${counts.unfinished} of ${counts.total} tests not finished`, type: 'timeout' });
  }
}

export function buildJunit(input: ReportInput): string {
  const members = input.members;
  const tests = members ? members.length : 1;
  const failures = members ? failedMembers(members).length : input.outcome === 'FAIL' ? 1 : 0;
  const errors = members ? unfinishedMembers(members).length : input.outcome === 'TIMEOUT' ? 1 : 0;
  const skipped = members ? skippedMembers(members).length : 0;
  const time = seconds(setDurationMs(input));
  const timestamp = input.status?.startedAt ?? input.status?.createdAt ?? new Date().toISOString();
  const totals = { tests: String(tests), failures: String(failures), errors: String(errors), skipped: String(skipped), time };

  const withCases = (members ?? []).filter((run) => (run.cases ?? []).length > 0);
  const doc = create({ version: '1.0', encoding: 'UTF-8' });
  const root = doc.ele('testsuites', { name: 'runset', ...(withCases.length === 0 ? totals : withCaseTotals(totals, withCases)) });
  const suite = root.ele('testsuite', { name: `runset ${input.env}`, ...totals, timestamp, id: input.setId });
  const properties = suite.ele('properties');
  properties.ele('property', { name: 'runset.testRunSetId', value: input.setId });
  properties.ele('property', { name: 'runset.env', value: input.env });
  properties.ele('property', { name: 'runset.status', value: input.outcome === 'TIMEOUT' ? `TIMEOUT (${input.status?.status ?? 'unknown'})` : input.outcome });
  if (input.suite) {
    properties.ele('property', { name: 'runset.suite.id', value: input.suite.id });
    if (input.suite.name) properties.ele('property', { name: 'runset.suite.name', value: input.suite.name });
    if (input.suite.commit) properties.ele('property', { name: 'runset.suite.commit', value: input.suite.commit });
  }
  if (members) for (const run of members) addMember(suite, run, input);
  else addWholeSet(suite, input);
  for (const run of withCases) addCases(root, run, input, timestamp);
  return doc.end({ prettyPrint: true });
}
