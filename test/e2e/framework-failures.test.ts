/**
 * Framework failures explain themselves: a framework that is not installed, a
 * listing that fails, a run whose framework cannot start and a case missing
 * from the report each give the affected entry or members the framework's own
 * first lines (or runset's exact reason), never a generic sentence. Runs the
 * listing and the executor directly on a real Vitest, Mocha, Cucumber and
 * Newman installed from npm (cached, see ../helpers/framework-versions.ts),
 * and on Debian's pytest.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CaseResult, FrameworkName, FrameworkTestSpec } from '../../src/core/types.js';
import { createFrameworkExecutor } from '../../src/executors/frameworks/index.js';
import { listFrameworkEntry } from '../../src/executors/frameworks/listing.js';
import type { ReportedCase } from '../../src/executors/frameworks/adapter.js';
import { frameworkCases } from '../../src/config/framework-discovery.js';
import { tempDir } from '../helpers/server.js';
import { frameworkModules, NEWMAN_VERSIONS, RegistryUnreachable } from '../helpers/framework-versions.js';
import { PYTHON, pytestVersion } from './framework-fixtures-pytest.js';
import { COLLECTION_FILE, writeNewmanSuite } from './framework-fixtures-newman.js';

/** The version of each framework these failures are shown on, and its npm package. */
const VERSIONS = { vitest: ['vitest', '4.1.12'], mocha: ['mocha', '12.0.3'], cucumber: ['@cucumber/cucumber', '12.9.0'], newman: ['newman', NEWMAN_VERSIONS[1]] } as const;
type Kind = keyof typeof VERSIONS;

const modules = new Map<Kind, string>();
let unreachable: string | undefined;

before(async () => {
  try {
    for (const [kind, [pkg, version]] of Object.entries(VERSIONS)) modules.set(kind as Kind, await frameworkModules(pkg, version));
  } catch (error) {
    if (!(error instanceof RegistryUnreachable)) throw error;
    unreachable = error.message;
  }
});

function suite(files: Record<string, string>, linked = true, type: Kind = 'vitest'): FrameworkTestSpec {
  const dir = tempDir('runset-fw-fail-');
  mkdirSync(dir, { recursive: true });
  if (linked) symlinkSync(modules.get(type)!, path.join(dir, 'node_modules'), 'dir');
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'broken', private: true, type: type === 'vitest' ? 'module' : 'commonjs' }));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return { name: 'suite', type, dir, args: [], tags: [], timeoutSeconds: 30, retries: 0, timeoutOverride: false, retriesOverride: false };
}

async function runShare(specs: FrameworkTestSpec[], type: FrameworkName = 'vitest', parallelism = 1): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const workDir = tempDir('runset-fw-work-');
  await createFrameworkExecutor(type).runBatch!(specs, { variables: {}, signal: new AbortController().signal, workDir, parallelism, onBegin: () => undefined, onEnd: (i, r) => (results[i] = r) });
  return results;
}

/** The entry's listed cases, as discovery makes them. */
async function listed(entry: FrameworkTestSpec): Promise<FrameworkTestSpec[]> {
  return frameworkCases('runset.config.yaml', entry, 0, await listFrameworkEntry(entry));
}

const PASSING = "import { test } from 'vitest';\ntest('one', () => {});\ntest('two', () => {});\n";

let passingListing: Promise<ReportedCase[]> | undefined;
/**
 * A fresh suite of PASSING and its cases. Vitest lists PASSING once for the file: the same files list the
 * same cases, and each test changes its own copy after the listing (a Vitest start is seconds of CPU).
 */
async function passingSuite(): Promise<{ entry: FrameworkTestSpec; cases: FrameworkTestSpec[] }> {
  const entry = suite({ 'a.test.js': PASSING });
  passingListing ??= listFrameworkEntry(entry);
  return { entry, cases: frameworkCases('runset.config.yaml', entry, 0, await passingListing) };
}

test('a framework that is not installed: the listing says which and how to install it', async (t) => {
  if (unreachable) return t.skip(unreachable);
  await assert.rejects(listFrameworkEntry(suite({ 'a.test.js': PASSING }, false)), /Vitest is not installed for .*npm install --save-dev vitest/);
});

test('a listing that fails carries the framework\'s own first lines, naming the file', async (t) => {
  if (unreachable) return t.skip(unreachable);
  await assert.rejects(listFrameworkEntry(suite({ 'a.test.js': PASSING, 'b.test.js': "import { test } from 'vitest';\nthrow new Error('b breaks on purpose at import');\n" })), /b\.test\.js: .*b breaks on purpose at import/);
});

test('a framework that cannot start fails every member of the share with its own words', async (t) => {
  if (unreachable) return t.skip(unreachable);
  const { entry, cases } = await passingSuite();
  writeFileSync(path.join(entry.dir, 'vitest.config.js'), "throw new Error('the config breaks on purpose');\n");
  const results = await runShare(cases);
  assert.equal(results.length, 2);
  for (const r of results) {
    assert.equal(r.passed, false);
    assert.match(r.error ?? '', /^Vitest 4\.1\.12 exited with code 1 without writing its report: .*the config breaks on purpose/s, r.error ?? '');
  }
});

test('a case missing from the report fails alone, saying so; the others keep their outcomes', async (t) => {
  if (unreachable) return t.skip(unreachable);
  const { entry, cases } = await passingSuite();
  writeFileSync(path.join(entry.dir, 'a.test.js'), "import { test } from 'vitest';\ntest('one', () => {});\ntest('two renamed', () => {});\n");
  const results = await runShare(cases);
  assert.equal(results[0]?.passed, true);
  assert.equal(results[1]?.passed, false);
  assert.match(results[1]?.error ?? '', /^the Vitest report has no result for this test/);
});

// ── Mocha ───────────────────────────────────────────────────────────────────

const MOCHA_SPEC = '.mocharc.json';
const MOCHA_PASSING = "describe('a', function () {\n  it('one', function () {});\n  it('two', function () {});\n});\n";

test('Mocha: not installed, a file that throws at import, a renamed test, a hook that fails', async (t) => {
  if (unreachable) return t.skip(unreachable);
  const rc = JSON.stringify({ spec: ['*.test.js'] });
  await assert.rejects(listFrameworkEntry(suite({ [MOCHA_SPEC]: rc, 'a.test.js': MOCHA_PASSING }, false, 'mocha')), /Mocha is not installed for .*npm install --save-dev mocha/);
  await assert.rejects(
    listFrameworkEntry(suite({ [MOCHA_SPEC]: rc, 'a.test.js': MOCHA_PASSING, 'b.test.js': "throw new Error('b breaks on purpose at import');\n" }, true, 'mocha')),
    /^Error: Mocha 12\.0\.3 exited with code 1 without writing its report: .*b breaks on purpose at import/,
  );
  const entry = suite({ [MOCHA_SPEC]: rc, 'a.test.js': MOCHA_PASSING }, true, 'mocha');
  const cases = await listed(entry);
  assert.deepEqual(cases.map((c) => c.name), ['a.test.js › a › one', 'a.test.js › a › two']);
  writeFileSync(path.join(entry.dir, 'a.test.js'), MOCHA_PASSING.replace("'two'", "'two renamed'"));
  const renamed = await runShare(cases, 'mocha');
  assert.equal(renamed[0]?.passed, true, renamed[0]?.error ?? '');
  assert.match(renamed[1]?.error ?? '', /^the Mocha report has no result for this test/);
  writeFileSync(path.join(entry.dir, 'a.test.js'), MOCHA_PASSING.replace("describe('a', function () {", "describe('a', function () {\n  before(function () { throw new Error('the hook breaks on purpose'); });"));
  for (const r of await runShare(cases, 'mocha')) assert.match(r.error ?? '', /^"before all" hook for "one": Error: the hook breaks on purpose/, r.error ?? '');
  // In parallel mode Mocha's reporter sees no suite's tests: the file's error reaches the tests without a result.
  for (const r of await runShare(cases.map((c) => ({ ...c, workers: 2 })), 'mocha', 2)) {
    assert.match(r.error ?? '', /^a\.test\.js: "before all" hook for "one": Error: the hook breaks on purpose/, r.error ?? '');
  }
});

// ── Cucumber ────────────────────────────────────────────────────────────────

const FEATURE = 'Feature: f\n  Scenario: one\n    Given ok\n  Scenario: two\n    Given ok\n';
const STEPS = "const { Given } = require('@cucumber/cucumber');\nGiven('ok', function () {});\n";
const LATER_FEATURE = 'Feature: g\n  Scenario: later\n    Given a step to write later\n  Scenario: twice\n    Given a step defined twice\n';
const LATER_STEPS = "const { Given } = require('@cucumber/cucumber');\nGiven('a step to write later', function () { return 'pending'; });\nGiven('a step defined twice', function () {});\nGiven(/^a step defined tw.ce$/, function () {});\n";

// One run shows a removed scenario, a pending and an ambiguous step: each Cucumber start costs seconds of CPU.
test('Cucumber: not installed, support code that throws, a feature that does not parse, a removed scenario, pending and ambiguous steps (failing as in its strict mode, saying which step and why), a failing BeforeAll', async (t) => {
  if (unreachable) return t.skip(unreachable);
  const files = { 'features/a.feature': FEATURE, 'features/support/steps.js': STEPS };
  await assert.rejects(listFrameworkEntry(suite(files, false, 'cucumber')), /Cucumber is not installed for .*npm install --save-dev @cucumber\/cucumber/);
  const throwing = { ...files, 'features/support/broken.js': "throw new Error('support breaks on purpose at import');\n" };
  await assert.rejects(listFrameworkEntry(suite(throwing, true, 'cucumber')), /Cucumber 12\.9\.0 exited with code 1 without writing its report: Error: support breaks on purpose at import/);
  const unparsable = { ...files, 'features/bad.feature': 'Feature: bad\n  Scenario: a\n    Given ok\n  Scenaro: typo\n' };
  await assert.rejects(listFrameworkEntry(suite(unparsable, true, 'cucumber')), /^Error: features\/bad\.feature: \(4:3\): expected: .*got 'Scenaro: typo'/);
  const entry = suite({ ...files, 'features/b.feature': LATER_FEATURE, 'features/support/later.js': LATER_STEPS }, true, 'cucumber');
  const cases = await listed(entry);
  assert.deepEqual(cases.map((c) => [c.name, c.case?.line]), [['features/a.feature › f › one', 2], ['features/a.feature › f › two', 4], ['features/b.feature › g › later', 2], ['features/b.feature › g › twice', 4]]);
  writeFileSync(path.join(entry.dir, 'features/a.feature'), 'Feature: f\n  Scenario: one\n    Given ok\n');
  const [one, removed, later, twice] = await runShare(cases, 'cucumber');
  assert.equal(one?.passed, true, one?.error ?? '');
  assert.match(removed?.error ?? '', /^the Cucumber report has no result for this test/);
  assert.equal(later?.passed, false);
  assert.equal(later?.error, 'Pending step: Given a step to write later');
  assert.equal(twice?.passed, false);
  assert.match(twice?.error ?? '', /^Multiple step definitions match:\n.*a step defined twice/);
  writeFileSync(path.join(entry.dir, 'features/support/steps.js'), `${STEPS}require('@cucumber/cucumber').BeforeAll(function () { throw new Error('BeforeAll breaks on purpose'); });\n`);
  for (const r of await runShare(cases.slice(0, 1), 'cucumber')) assert.match(r.error ?? '', /exit code 1\): Error: a BeforeAll hook errored.*\n.*BeforeAll breaks on purpose/, r.error ?? '');
});

const pytest = pytestVersion();

function pytestSuite(files: Record<string, string>, python = PYTHON): FrameworkTestSpec {
  const dir = tempDir('runset-pytest-fail-');
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return { name: 'suite', type: 'pytest', dir, args: [], python, tags: [], timeoutSeconds: 30, retries: 0, timeoutOverride: false, retriesOverride: false };
}

const PY_PASSING = 'def test_one():\n    pass\n\ndef test_two():\n    pass\n';

test('pytest: an interpreter that is not there is named, with what to do', async () => {
  await assert.rejects(listFrameworkEntry(pytestSuite({ 'test_a.py': PY_PASSING }, 'no-such-python3')), /the Python interpreter "no-such-python3" was not found: install pytest for it .*set "python:"/);
});

test('pytest: an interpreter without the pytest module is named with its own words', async (t) => {
  if ('missing' in pytest) return t.skip(pytest.missing);
  const entry = pytestSuite({ 'test_a.py': PY_PASSING });
  // A real interpreter without site-packages: Python itself, told not to load them (-S).
  const bare = path.join(entry.dir, 'python-without-pytest');
  writeFileSync(bare, `#!/bin/sh\nexec ${PYTHON} -S "$@"\n`);
  chmodSync(bare, 0o755);
  await assert.rejects(listFrameworkEntry({ ...entry, python: './python-without-pytest' }), /pytest is not usable with ".*python-without-pytest" \(\/usr\/bin\/python3\): ModuleNotFoundError: No module named 'pytest'/);
});

test('pytest: a test file with a syntax error fails the listing with pytest\'s own lines, naming the file', async (t) => {
  if ('missing' in pytest) return t.skip(pytest.missing);
  await assert.rejects(listFrameworkEntry(pytestSuite({ 'test_a.py': PY_PASSING, 'test_b.py': 'def broken(:\n    pass\n' })), /test_b\.py: .*SyntaxError: invalid syntax/s);
});

test('pytest: a case missing from the report fails alone, saying so; a file broken since the listing carries pytest\'s lines', async (t) => {
  if ('missing' in pytest) return t.skip(pytest.missing);
  const entry = pytestSuite({ 'test_a.py': PY_PASSING, 'test_b.py': PY_PASSING });
  const cases = frameworkCases('runset.config.yaml', entry, 0, await listFrameworkEntry(entry));
  assert.deepEqual(cases.map((c) => c.name), ['test_a.py::test_one', 'test_a.py::test_two', 'test_b.py::test_one', 'test_b.py::test_two']);
  writeFileSync(path.join(entry.dir, 'test_a.py'), 'def test_one():\n    pass\n\ndef test_two_renamed():\n    pass\n');
  writeFileSync(path.join(entry.dir, 'test_b.py'), 'import no_such_module_here\n');
  const results = await runShare(cases, cases[0]!.type);
  assert.equal(results[0]?.passed, true, JSON.stringify(results[0]));
  assert.match(results[1]?.error ?? '', /^the pytest report has no result for this test/);
  for (const r of results.slice(2)) assert.match(r.error ?? '', /^test_b\.py: .*No module named 'no_such_module_here'/s, r.error ?? '');
});

test('Newman: a request removed since the listing fails alone; the others keep their outcomes', async (t) => {
  if (unreachable) return t.skip(unreachable);
  const dir = tempDir('runset-newman-fail-');
  writeNewmanSuite(dir, 'shop', modules.get('newman')!);
  const entry: FrameworkTestSpec = { name: 'api', type: 'newman', dir, args: [], collection: COLLECTION_FILE, tags: [], timeoutSeconds: 30, retries: 0, timeoutOverride: false, retriesOverride: false };
  const cases = frameworkCases('runset.config.yaml', entry, 0, await listFrameworkEntry(entry)).filter((c) => /› (top level|cannot connect)$/.test(c.name));
  const collection = JSON.parse(readFileSync(path.join(dir, COLLECTION_FILE), 'utf8')) as { item: Array<{ name: string }> };
  collection.item = collection.item.filter((i) => i.name !== 'top level');
  writeFileSync(path.join(dir, COLLECTION_FILE), JSON.stringify(collection));
  const results = await runShare(cases, cases[0]!.type);
  assert.equal(cases.length, 2);
  const byName = new Map(cases.map((c, i) => [c.name, results[i]]));
  assert.match(byName.get('shop › group › cannot connect')?.error ?? '', /^request: Error: connect ECONNREFUSED 127\.0\.0\.1:1$/, JSON.stringify(results));
  assert.match(byName.get('shop › top level')?.error ?? '', /^the Newman report has no result for this test/);
});

test('Newman: a collection that is not one fails the listing, naming the file', async (t) => {
  if (unreachable) return t.skip(unreachable);
  const dir = tempDir('runset-newman-fail-');
  writeNewmanSuite(dir, 'shop', modules.get('newman')!);
  writeFileSync(path.join(dir, COLLECTION_FILE), '{"info": {"name": "shop"}, "requests": []}');
  const entry: FrameworkTestSpec = { name: 'api', type: 'newman', dir, args: [], collection: COLLECTION_FILE, tags: [], timeoutSeconds: 30, retries: 0, timeoutOverride: false, retriesOverride: false };
  await assert.rejects(listFrameworkEntry(entry), /shop\.postman_collection\.json: not a Postman collection \(v2\.0 or v2\.1\): it has no "item" list/);
});
