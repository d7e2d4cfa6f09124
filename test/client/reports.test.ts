/** The report builders as pure functions: escaping rules, flaky and skipped members, clean text. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { convert } from 'xmlbuilder2';
import { annotations, escapeData, escapeProperty, outputLines, stepSummaryMarkdown } from '../../src/client/reports/github.js';
import { buildJunit } from '../../src/client/reports/junit.js';
import { cleanText, outputTail, verdictText, type ReportInput } from '../../src/client/reports/model.js';
import { readFailing, readTestRuns } from '../../src/client/parse.js';
import { summaryLines } from '../../src/client/progress.js';
import { isFlaky, isSkipped, type TestRun } from '../../src/client/types.js';

function member(over: Partial<TestRun>): TestRun {
  return { id: 'm', name: 'a test', type: 'http', status: 'SUCCESS', attempts: 1, startedAt: null, endedAt: null, durationMs: 10, error: null, output: null, ...over };
}

function input(members: TestRun[] | null, outcome: ReportInput['outcome'] = 'FAIL'): ReportInput {
  return { env: 'staging', setId: 'set-1', outcome, status: null, members, elapsedMs: 1500 };
}

test('GitHub workflow command escaping: % CR LF in data; also : and , in properties', () => {
  assert.equal(escapeData('100% done\r\nnext'), '100%25 done%0D%0Anext');
  assert.equal(escapeProperty('a: b, c%'), 'a%3A b%2C c%25');
});

test('annotations: one ::error per failed member; a set-level one without members', () => {
  const lines = annotations(input([member({ name: 'x, y: z', status: 'FAIL', error: 'line 1\nline 2' })]));
  assert.deepEqual(lines, ['::error title=runset%3A x%2C y%3A z::line 1%0Aline 2']);
  assert.match(annotations(input(null))[0] ?? '', /^::error title=runset%3A test run set failed::/);
});

test('flaky: the server flag wins; otherwise SUCCESS after more than one attempt', () => {
  assert.equal(isFlaky(member({ attempts: 2 })), true);
  assert.equal(isFlaky(member({ attempts: 1 })), false);
  assert.equal(isFlaky(member({ attempts: 3, flaky: false })), false);
  assert.equal(isFlaky(member({ attempts: 1, flaky: true })), true);
  assert.equal(isFlaky(member({ attempts: 3, status: 'FAIL' })), false, 'a failure is a failure, not flaky');
});

test('JUnit escapes names and strips characters XML cannot carry', () => {
  const xml = buildJunit(input([member({ name: 'a <b> & "c"', status: 'FAIL', error: 'bad\u0007 thing', output: '\u001b[1mbold\u001b[0m' })]));
  assert.ok(![...xml].some((ch) => ch < ' ' && !'\t\n\r'.includes(ch)), 'no control characters');
  const doc = convert(xml, { format: 'object' }) as { testsuites: { testsuite: { testcase: Record<string, unknown> } } };
  assert.ok(String(doc.testsuites.testsuite.testcase['@name']).includes('&'));
  assert.match(String((doc.testsuites.testsuite.testcase.failure as Record<string, unknown>)['#']), /bold/);
});

test('Markdown cells cannot break the table or inject HTML', () => {
  const md = stepSummaryMarkdown(input([member({ name: 'a|b<script>', status: 'FAIL', error: 'x\ny' })]));
  assert.match(md, /\| ❌ failed \| a\\\|b&lt;script&gt; \| http \| 1 \| 10ms \| x \|/);
});

test('outputs: plain lines, and a heredoc when a value has a newline', () => {
  assert.equal(outputLines({ status: 'FAIL' }), 'status=FAIL\n');
  assert.match(outputLines({ note: 'a\nb' }), /^note<<(runset_[0-9a-f-]+)\na\nb\n\1\n$/);
});

test('cleanText and outputTail keep the end of long output', () => {
  assert.equal(cleanText('\u001b[31mred\u001b[0m\u0000'), 'red\uFFFD');
  const long = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
  const tail = outputTail(long, 3);
  assert.equal(tail, 'line 97\nline 98\nline 99');
});

test('JUnit names the suite version the set ran (trigger --suite), and nothing when it ran the server\'s own tests', () => {
  const suite = { id: 'a'.repeat(64), name: 'pr-12', commit: '0123abc' };
  const xml = buildJunit({ ...input([member({})], 'SUCCESS'), suite });
  for (const [name, value] of [['runset.suite.id', suite.id], ['runset.suite.name', 'pr-12'], ['runset.suite.commit', '0123abc']] as const) {
    assert.match(xml, new RegExp(`<property name="${name.replace(/\./g, '\\.')}" value="${value}"/>`));
  }
  assert.doesNotMatch(buildJunit(input([member({})], 'SUCCESS')), /runset\.suite/);
});

test('skipped members: <skipped/> in JUnit and the suite\'s count; the summaries count them apart from what passed', () => {
  const members = [
    member({ id: 'a', name: 'ran' }),
    member({ id: 'b', name: 'declared skip', type: 'playwright', skipped: true }),
    member({ id: 'c', name: 'skipped at run time', type: 'playwright', skipped: true }),
    member({ id: 'd', name: 'broke', status: 'FAIL', error: 'boom', skipped: true }),
  ];
  const doc = convert(buildJunit(input(members)), { format: 'object' }) as {
    testsuites: { '@skipped': string; testsuite: { '@skipped': string; '@tests': string; testcase: Array<Record<string, unknown>> } };
  };
  assert.equal(doc.testsuites['@skipped'], '2');
  assert.equal(doc.testsuites.testsuite['@skipped'], '2');
  assert.equal(doc.testsuites.testsuite['@tests'], '4');
  const cases = doc.testsuites.testsuite.testcase;
  assert.deepEqual(cases.map((c) => 'skipped' in c), [false, true, true, false], 'a FAIL is a failure whatever it carries');
  assert.ok('failure' in cases[3]!);
  assert.match(buildJunit(input([member({})], 'SUCCESS')), /skipped="0"/);

  assert.equal(summaryLines(input(members))[1], '  4 tests: 3 passed (2 skipped), 1 failed · took 1.5s');
  assert.equal(summaryLines(input([member({})], 'SUCCESS'))[1], '  1 tests: 1 passed, 0 failed · took 1.5s', 'no mark when none was skipped');
  const markdown = stepSummaryMarkdown(input(members));
  assert.match(markdown, /· 3 passed \(2 skipped\) ·/);
  assert.match(markdown, /\| ⏭️ skipped \| declared skip \|/);
  assert.match(markdown, /\| ✅ passed \| ran \|/);
});

test('the SDK reads skipped tolerantly: absent or not a boolean is false, and only a SUCCESS is skipped', () => {
  const base = { id: 'm', name: 'n', type: 'playwright', status: 'SUCCESS', attempts: 1 };
  const runs = readTestRuns({ testRuns: [{ ...base, skipped: true }, base, { ...base, skipped: 'yes' }, { ...base, status: 'FAIL', skipped: true }] });
  assert.deepEqual(runs?.map((r) => r.skipped), [true, false, false, true]);
  assert.deepEqual(runs?.map((r) => isSkipped(r)), [true, false, false, false]);
});

test("the verdict reads the server's failing count: a FAIL with no failure of its own names what failed it; a SUCCESS's failures were quarantined", () => {
  // Two passes after a retry failed the set (failOnFlaky); only one of them says so in the member's flags (flaky: false on the other).
  const passes = [member({ name: 'a', attempts: 2 }), member({ name: 'b', attempts: 2, flaky: false }), member({ name: 'c' })];
  assert.equal(
    verdictText({ ...input(passes), failing: 2 }),
    'FAIL: 2 tests passed only after a retry, and this environment fails a set on flaky tests (failOnFlaky)',
  );
  assert.match(verdictText(input(passes)), /^FAIL: 1 test passed only after a retry/, 'an older server does not say: the members tell');
  // A failure of its own is the verdict, whatever else failed the set.
  assert.equal(verdictText({ ...input([member({ status: 'FAIL' }), member({ attempts: 2 })]), failing: 2 }), 'FAIL: 1 of 2 tests failed');
  // No member listed: the counts and the server's figure are all there is.
  const counted: ReportInput = { ...input(null, 'SUCCESS'), status: { id: 'set-1', status: 'SUCCESS', progress: { counts: { WAITING: 0, RUNNING: 0, SUCCESS: 3, FAIL: 1 } } } as ReportInput['status'] };
  assert.equal(verdictText(counted), 'SUCCESS: 3 of 4 tests passed — 1 test quarantined failed');
  assert.equal(readFailing({ failing: 3 }), 3);
  assert.equal(readFailing({ failing: -1 }), null);
  assert.equal(readFailing({}), null, 'a server older than the field');
});
