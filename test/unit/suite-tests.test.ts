/**
 * An uploaded version's config, as the API reads it: tests only, with the
 * server's environments (src/config/suite-tests-only.ts), its Playwright
 * entries expanded from the shipped listing without running anything
 * (src/config/suite-listing.ts), every path under VERSION_ROOT.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, parseSuiteConfig } from '../../src/config/suite.js';
import { parseSuiteTests } from '../../src/config/suite-tests.js';
import { applySuiteListing, discoverSuiteTests, listSuiteForUpload } from '../../src/config/suite-listing.js';
import { VERSION_ROOT } from '../../src/core/suites.js';
import type { CommandTestSpec, PlaywrightTestSpec } from '../../src/core/types.js';

const SERVER = parseSuiteConfig('environments:\n  preview: { variables: { BASE_URL: "http://x" } }\n  staging: { variables: { BASE_URL: "http://y" } }\ntests: []\n', '/srv/runset.config.yaml');
const AT_ROOT = `${VERSION_ROOT}/runset.config.yaml`;
const DEMO = fileURLToPath(new URL('../../../examples/demo/', import.meta.url));

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

test("the file's environments, webhooks and code hosts are ignored and said to be; the server's are used", () => {
  const text = 'environments:\n  mine: { variables: {} }\nwebhooks: []\ngithub: { repository: a/b }\ntests:\n  - { name: a, type: http, request: { url: "{{BASE_URL}}/" }, environments: [preview] }\n';
  const config = parseSuiteTests(text, AT_ROOT, SERVER.environments, []);

  assert.deepEqual(config.ignored, ['environments', 'webhooks', 'github']);
  assert.deepEqual(config.codeHosts, { github: null, gitlab: null });
  assert.deepEqual([...config.environments.keys()], ['preview', 'staging']);
  assert.deepEqual(config.webhooks, []);
  assert.deepEqual(config.tests.map((t) => t.name), ['a']);
  assert.deepEqual(parseSuiteTests('tests: []\n', AT_ROOT, SERVER.environments, []).ignored, []);
});

test('a test naming an environment the server lacks, or a variable it does not declare, is a ConfigError saying which are known', () => {
  const unknown = configError(() => parseSuiteTests('environments: { mine: {} }\ntests:\n  - { name: a, type: http, request: { url: "http://x" }, environments: [mine] }\n', AT_ROOT, SERVER.environments, []));
  assert.match(unknown.message, /tests\[0\]\.environments\[0\]: unknown environment "mine".*preview, staging/);
  const variable = configError(() => parseSuiteTests('tests:\n  - { name: a, type: http, request: { url: "{{NOPE}}" } }\n', AT_ROOT, SERVER.environments, []));
  assert.match(variable.message, /\{\{NOPE\}\} is not declared/);
  // The uploader does not know the server's environments: those checks are the server's.
  assert.equal(parseSuiteTests('tests:\n  - { name: a, type: http, request: { url: "{{NOPE}}" }, environments: [x] }\n', AT_ROOT, null, []).tests.length, 1);
});

test('paths resolve under VERSION_ROOT, checked against the archive; outside the folder is refused', () => {
  const files = ['runset.config.yaml', 'e2e/', 'e2e/playwright.config.ts', 'scripts/check.sh'];
  const text = 'tests:\n  - { name: pw, type: playwright, dir: e2e }\n  - { name: c, type: command, run: [./check.sh], cwd: scripts }\n';
  const config = parseSuiteTests(text, AT_ROOT, SERVER.environments, files);
  const [pw, command] = config.tests as [PlaywrightTestSpec, CommandTestSpec];
  assert.equal(pw.dir, `${VERSION_ROOT}/e2e`);
  assert.equal(pw.config, `${VERSION_ROOT}/e2e/playwright.config.ts`);
  assert.equal(command.cwd, `${VERSION_ROOT}/scripts`);
  assert.equal(config.dir, VERSION_ROOT);
  assert.match(configError(() => parseSuiteTests('tests:\n  - { name: pw, type: playwright, dir: other }\n', AT_ROOT, SERVER.environments, files)).message, /"other" is not a folder/);
  assert.match(configError(() => parseSuiteTests('tests:\n  - { name: pw, type: playwright, dir: ../etc }\n', AT_ROOT, SERVER.environments, files)).message, /tests\[0\]\.dir: "\.\.\/etc" is outside the suite's folder/);
  assert.match(configError(() => parseSuiteTests('tests:\n  - { name: c, type: command, run: [ls], cwd: /etc }\n', AT_ROOT, SERVER.environments, files)).message, /tests\[0\]\.cwd: "\/etc" is outside/);
});

test('the uploader lists with its Playwright; the server expands the same cases from the listing, under VERSION_ROOT', async () => {
  const text = readFileSync(path.join(DEMO, 'runset.config.yaml'), 'utf8');
  const local = parseSuiteTests(text, path.join(DEMO, 'runset.config.yaml'), null, 'disk');
  const listing = await listSuiteForUpload(local);
  assert.deepEqual(listing.reports.map((r) => r.entry), [4]);
  const files = ['runset.config.yaml', 'checks/health.mjs', 'e2e/playwright.config.ts'];
  const server = parseSuiteTests(text, AT_ROOT, parseSuiteConfig(text, path.join(DEMO, 'runset.config.yaml')).environments, files);
  const expanded = applySuiteListing(server, JSON.parse(JSON.stringify(listing)));
  const cases = expanded.tests.filter((t): t is PlaywrightTestSpec => t.type === 'playwright');
  assert.ok(cases.length > 0 && cases.every((c) => c.case !== undefined && c.dir === `${VERSION_ROOT}/e2e`));
  const discovered = await discoverSuiteTests(parseSuiteConfig(text, path.join(DEMO, 'runset.config.yaml')));
  assert.deepEqual(expanded.tests.map((t) => t.name), discovered.tests.map((t) => t.name), 'the same members as the server listing its own copy');
});

test('a listing missing for an entry, or malformed, is a ConfigError naming the entry', () => {
  const files = ['runset.config.yaml', 'e2e/playwright.config.ts'];
  const config = parseSuiteTests('tests:\n  - { name: h, type: http, request: { url: "http://x" } }\n  - { name: shop, type: playwright, dir: e2e }\n', AT_ROOT, SERVER.environments, files);
  assert.match(configError(() => applySuiteListing(config, null)).message, /tests\[1\].*"shop".*listing is missing/);
  assert.match(configError(() => applySuiteListing(config, { version: 1, reports: [] })).message, /tests\[1\].*"shop".*no listing for it/);
  assert.match(configError(() => applySuiteListing(config, { version: 2, reports: [] })).message, /version 2/);
  assert.match(configError(() => applySuiteListing(config, { version: 1, reports: [{ entry: 1, report: { suites: 'x' } }] })).message, /"shop".*not a Playwright JSON report: "suites" is not a list/);
  const deep: Record<string, unknown> = { title: 'f', specs: [] };
  let at = deep;
  for (let i = 0; i < 100; i++) at = (at.suites = [{ title: `d${i}` }])[0] as Record<string, unknown>;
  assert.match(configError(() => applySuiteListing(config, { version: 1, reports: [{ entry: 1, report: { suites: [deep] } }] })).message, /nested deeper than 64/);
  assert.match(configError(() => applySuiteListing(config, { version: 1, reports: [{ entry: 1, report: { suites: [] } }] })).message, /"shop".*no test cases found/);
  // The one empty-run rule (noCasesFound), naming the filters that left nothing.
  const filtered = parseSuiteTests('tests:\n  - { name: shop, type: playwright, dir: e2e, grep: smoke }\n', AT_ROOT, SERVER.environments, files);
  assert.match(configError(() => applySuiteListing(filtered, { version: 1, reports: [{ entry: 0, report: { suites: [] } }] })).message, /Playwright suite "shop".*no test cases found with grep "smoke".*an empty run must not pass/);
  const huge = { config: { projects: [{ name: '', retries: 1e9 }] }, suites: [] };
  assert.match(configError(() => applySuiteListing(config, { version: 1, reports: [{ entry: 1, report: huge }] })).message, /retries" is not a whole number from 0 to 100/);
  const oneCase = { suites: [{ title: 'a.spec.ts', file: 'a.spec.ts', specs: [{ title: 'works', file: 'a.spec.ts', line: 3, column: 5, tests: [{ projectName: '', timeout: 30000 }] }] }] };
  const expanded = applySuiteListing(config, { version: 1, reports: [{ entry: 1, report: oneCase }] });
  assert.deepEqual(expanded.tests.map((t) => t.name), ['h', 'a.spec.ts › works']);
});

test("a framework entry's shipped cases become its members; a missing, forged or oversized listing is a ConfigError naming the entry", () => {
  const files = ['runset.config.yaml', 'e2e/playwright.config.ts', 'unit/', 'unit/a.test.js'];
  const text = 'tests:\n  - { name: shop, type: playwright, dir: e2e }\n  - { name: unit, type: vitest, dir: unit }\n';
  const config = parseSuiteTests(text, AT_ROOT, SERVER.environments, files);
  const pw = { entry: 0, report: { suites: [{ title: 'a.spec.ts', file: 'a.spec.ts', specs: [{ title: 'works', file: 'a.spec.ts', line: 3, column: 5, tests: [{ projectName: '' }] }] }] } };
  const listing = (cases: unknown): unknown => ({ version: 1, reports: [pw, { entry: 1, cases }] });
  assert.match(configError(() => applySuiteListing(config, { version: 1, reports: [pw] })).message, /tests\[1\].*Vitest suite "unit".*no listing for it/);
  assert.match(configError(() => applySuiteListing(config, listing('x'))).message, /tests\[1\].*"unit".*not a list of cases/);
  assert.match(configError(() => applySuiteListing(config, listing([{ file: 'a.test.js', titles: 'adds' }]))).message, /"unit".*not a list of cases: \/0\/titles/);
  assert.match(configError(() => applySuiteListing(config, listing([{ file: 'a.test.js', titles: ['adds'], run: 'rm -rf /' }]))).message, /"unit".*not a list of cases/);
  assert.match(configError(() => applySuiteListing(config, listing([{ file: 'a.test.js', titles: ['x'.repeat(5000)] }]))).message, /"unit".*not a list of cases: \/0\/titles\/0/);
  assert.match(configError(() => applySuiteListing(config, listing([]))).message, /Vitest suite "unit".*no test cases found.*an empty run must not pass/);
  assert.match(configError(() => applySuiteListing(config, listing([{ file: 'a.test.js', titles: ['adds'] }, { file: 'a.test.js', titles: ['adds'] }]))).message, /both named "a\.test\.js › adds"/);

  const expanded = applySuiteListing(config, listing([{ file: 'a.test.js', titles: ['math', 'adds'], tags: ['fast'] }, { file: 'a.test.js', titles: ['subtracts'] }]));
  assert.deepEqual(expanded.tests.map((t) => t.name), ['a.spec.ts › works', 'a.test.js › math › adds', 'a.test.js › subtracts']);
  const adds = expanded.tests[1] as { type: string; dir: string; case?: { entry: string; tags?: string[] } };
  assert.deepEqual([adds.type, adds.dir, adds.case?.entry, adds.case?.tags], ['vitest', `${VERSION_ROOT}/unit`, 'unit', ['fast']]);
});
