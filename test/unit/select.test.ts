/**
 * The selection rule (src/sets/select.ts): each field alone and combined, over
 * http, command and Playwright tests; Playwright cases' own tags read from the
 * listing report (src/config/playwright-discovery.ts), through planning.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describeSelection, selectTests } from '../../src/sets/select.js';
import { planTestRunSet } from '../../src/sets/plan.js';
import { planRerun } from '../../src/sets/rerun.js';
import { entryCases } from '../../src/config/playwright-discovery.js';
import { reportForUpload, reportShapeProblem, type JsonReport } from '../../src/config/playwright-report.js';
import { RunsetError } from '../../src/core/errors.js';
import type { SuiteConfig } from '../../src/config/suite.js';
import type { EnvironmentConfig, PlaywrightTestSpec, TestSelection, TestSpec } from '../../src/core/types.js';

const common = { timeoutSeconds: 30, retries: 0 };
const http = (name: string, tags: string[] = []): TestSpec => ({ ...common, name, tags, type: 'http', request: { method: 'GET', url: 'https://x/' }, expect: {} });
const command = (name: string, tags: string[] = []): TestSpec => ({ ...common, name, tags, type: 'command', run: ['true'], cwd: '/' });
const entry: PlaywrightTestSpec = {
  ...common, name: 'ui', tags: ['ui'], type: 'playwright', dir: '/s', config: '/s/playwright.config.ts', timeoutOverride: false, retriesOverride: false,
};

/** A listing report as Playwright writes it: spec `tags` without "@", from titles and `tag:` annotations. */
const REPORT: JsonReport = {
  config: { projects: [{ name: 'chromium' }, { name: 'firefox' }], filteredProjects: [{ name: 'chromium', use: {} }, { name: 'firefox', use: { browserName: 'firefox' } }] },
  suites: [
    {
      title: 'shop.spec.ts',
      file: 'shop.spec.ts',
      specs: [
        { title: 'checkout @smoke', file: 'shop.spec.ts', line: 3, column: 5, tags: ['smoke'], tests: [{ projectName: 'chromium' }, { projectName: 'firefox' }] },
        { title: 'search', file: 'shop.spec.ts', line: 9, column: 5, tags: ['slow'], tests: [{ projectName: 'chromium' }, { projectName: 'firefox' }] },
      ],
    },
  ],
};
const cases = entryCases('/s/runset.config.yaml', entry, 0, REPORT);
const tests: TestSpec[] = [http('api health', ['smoke', 'api']), command('db migrate', ['@db']), http('api checkout'), ...cases];
const names = (select: TestSelection): string[] => selectTests(tests, select, 'staging').map((t) => t.name);

function refusal(fn: () => unknown): RunsetError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof RunsetError, String(error));
    return error;
  }
  assert.fail('expected a refusal');
}

test('Playwright cases carry the tags the listing reports', () => {
  assert.deepEqual(cases.map((c) => [c.name, c.case?.tags]), [
    ['[chromium] › shop.spec.ts › checkout @smoke', ['smoke']],
    ['[firefox] › shop.spec.ts › checkout @smoke', ['smoke']],
    ['[chromium] › shop.spec.ts › search', ['slow']],
    ['[firefox] › shop.spec.ts › search', ['slow']],
  ]);
  // An upload keeps them (what the server reads of an uploaded version's listing).
  assert.deepEqual(reportForUpload(REPORT).suites?.[0]?.specs?.map((s) => s.tags), [['smoke'], ['slow']]);
  const tooMany = structuredClone(REPORT);
  tooMany.suites![0]!.specs![0]!.tags = Array.from({ length: 101 }, (_, i) => `t${i}`);
  assert.match(reportShapeProblem(tooMany) ?? '', /specs\[0\] is not a spec/);
});

test('no selection keeps every test in order, and so does an empty one stored before it was refused', () => {
  assert.equal(selectTests(tests, undefined, 'staging').length, tests.length);
  assert.equal(selectTests(tests, {}, 'staging').length, tests.length);
});

test('tags: any of them, on http, command and Playwright tests; "@" ignored on either side', () => {
  assert.deepEqual(names({ tags: ['smoke'] }), ['api health', '[chromium] › shop.spec.ts › checkout @smoke', '[firefox] › shop.spec.ts › checkout @smoke']);
  assert.deepEqual(names({ tags: ['@db', 'slow'] }), ['db migrate', '[chromium] › shop.spec.ts › search', '[firefox] › shop.spec.ts › search']);
  // A Playwright entry's own config tags apply to each of its cases.
  assert.equal(names({ tags: ['ui'] }).length, 4);
});

test('grep and grepInvert match the name as members show it', () => {
  assert.deepEqual(names({ grep: 'checkout' }), ['api checkout', '[chromium] › shop.spec.ts › checkout @smoke', '[firefox] › shop.spec.ts › checkout @smoke']);
  assert.deepEqual(names({ grep: '^api ' }), ['api health', 'api checkout']);
  assert.deepEqual(names({ grepInvert: 'shop|api' }), ['db migrate']);
});

test('names are exact; projects keep only Playwright cases of them', () => {
  assert.deepEqual(names({ names: ['db migrate', '[firefox] › shop.spec.ts › search', 'api'] }), ['db migrate', '[firefox] › shop.spec.ts › search']);
  assert.deepEqual(names({ projects: ['firefox'] }), ['[firefox] › shop.spec.ts › checkout @smoke', '[firefox] › shop.spec.ts › search']);
});

test('the fields AND together', () => {
  assert.deepEqual(names({ tags: ['smoke'], projects: ['chromium'] }), ['[chromium] › shop.spec.ts › checkout @smoke']);
  assert.deepEqual(names({ tags: ['smoke', 'slow'], grep: 'shop', grepInvert: 'search', projects: ['firefox'] }), ['[firefox] › shop.spec.ts › checkout @smoke']);
  assert.deepEqual(names({ grep: 'api', names: ['api checkout', 'db migrate'] }), ['api checkout']);
});

test('a selection that keeps nothing is no_tests_selected, naming the filter and the count', () => {
  const err = refusal(() => names({ tags: ['nightly'], projects: ['webkit'] }));
  assert.equal(err.code, 'no_tests_selected');
  assert.match(err.message, /select tags "nightly"; projects "webkit" matches none of the 7 tests environment "staging" has/);
});

test('an invalid or runaway pattern is refused with invalid_body naming the field', () => {
  const bad = refusal(() => names({ grepInvert: 'a(' }));
  assert.equal(bad.code, 'invalid_body');
  assert.match(bad.message, /^select\.grepInvert is not a valid JavaScript regular expression \(.*Unterminated group\)/);
  const started = Date.now();
  const slow = refusal(() => selectTests([command(`${'a'.repeat(40)}!`)], { grep: '^(a+)+$' }, 'staging'));
  assert.equal(slow.code, 'invalid_body');
  assert.match(slow.message, /took over 50 ms/, 'a runaway pattern holds the event loop 50 ms (was 250), then is refused');
  assert.ok(Date.now() - started < 2000, 'the deadline stopped it');
  // Ordinary patterns over many names stay well inside the deadline.
  const many = Array.from({ length: 1000 }, (_, i) => command(`suite ${i} › checkout › pays with card ${i}`));
  assert.equal(selectTests(many, { grep: 'checkout|login', grepInvert: 'card 4\\d{2}$' }, 'staging').length, 900);
});

test('describeSelection shortens long lists', () => {
  assert.equal(describeSelection({ names: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] }), 'names "a", "b", "c" and 4 more');
});

test('planning records the selection and plans only what it keeps; run again keeps it', () => {
  const environment: EnvironmentConfig = { name: 'staging', variables: {}, maxFailures: null, maxConcurrentSets: null, setTimeoutSeconds: 3600, failOnFlaky: false, allowPrivateTargets: false, allowSuiteUploads: false, overrideRules: {} };
  const suite: SuiteConfig = { file: '/x/runset.config.yaml', dir: '/x', environments: new Map([['staging', environment]]), tests, webhooks: [], codeHosts: { github: null, gitlab: null } };
  const opts = { secretKey: randomBytes(32), keyId: null };
  const set = planTestRunSet(suite, { env: 'staging', select: { tags: ['smoke'] } }, opts);
  assert.deepEqual(set.select, { tags: ['smoke'] });
  assert.equal(set.runs.length, 3);
  const empty = refusal(() => planTestRunSet(suite, { env: 'staging', select: {} }, opts));
  assert.equal(empty.code, 'invalid_body', 'select: {} narrows nothing: a mistake, refused');
  assert.match(empty.message, /^select is empty: it must hold at least one of tags, grep, grepInvert, names or projects .*; leave select out to run every test$/);
  const again = planRerun(suite, { id: set.id, env: 'staging', overrides: {}, labels: {}, select: set.select }, opts);
  assert.deepEqual(again.select, { tags: ['smoke'] });
  assert.deepEqual(again.runs.map((r) => r.spec.name).sort(), set.runs.map((r) => r.spec.name).sort());
  // Today's tests no longer match it: the earlier set's doing, not the caller's.
  const gone = refusal(() => planRerun({ ...suite, tests: [command('other')] }, { id: set.id, env: 'staging', overrides: {}, labels: {}, select: set.select }, opts));
  assert.equal(gone.code, 'rerun_conflict');
});
