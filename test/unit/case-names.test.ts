/**
 * Two entries over one Playwright suite (src/config/case-names.ts), listed by
 * the real Playwright: the cases keep the suite's own names while the entries'
 * environments are disjoint, take their entry's name first where they share
 * one, and a name that still clashes in an environment is a config error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadSuite } from '../../src/config/load.js';
import { ConfigError, testsForEnvironment, type SuiteConfig } from '../../src/config/suite.js';
import { tempDir } from '../helpers/server.js';

const SPEC = `
import { test } from '@playwright/test';
test('home @smoke', async () => {});
test.describe('cart', () => {
  test('adds an item @smoke', async () => {});
  test('removes an item', async () => {});
});
`;

const ENVIRONMENTS = 'environments:\n  prod: { variables: {} }\n  staging: { variables: {} }\ntests:\n';

/** A suite folder beside a runset.config.yaml holding `tests`; returns the config's path. */
function writeConfig(tests: string): string {
  const dir = tempDir('runset-case-names-');
  mkdirSync(path.join(dir, 'e2e', 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'e2e', 'playwright.config.ts'), "export default { testDir: 'tests' };\n");
  writeFileSync(path.join(dir, 'e2e', 'tests', 'shop.spec.ts'), SPEC);
  const file = path.join(dir, 'runset.config.yaml');
  writeFileSync(file, ENVIRONMENTS + tests);
  return file;
}

const load = (file: string) => loadSuite(file, { discover: true });
const namesIn = (suite: SuiteConfig, env: string) => testsForEnvironment(suite, env).map((t) => t.name);

const SMOKE = ['shop.spec.ts › home @smoke', 'shop.spec.ts › cart › adds an item @smoke'];
const ALL = ['shop.spec.ts › home @smoke', 'shop.spec.ts › cart › adds an item @smoke', 'shop.spec.ts › cart › removes an item'];

test('entries over one suite in disjoint environments keep the suite\'s own names', async () => {
  const suite = await load(writeConfig(`
  - { name: smoke, type: playwright, dir: e2e, grep: "@smoke", environments: [prod] }
  - { name: full, type: playwright, dir: e2e, environments: [staging] }
`));
  assert.deepEqual(namesIn(suite, 'prod'), SMOKE);
  assert.deepEqual(namesIn(suite, 'staging'), ALL);
  const entries = (env: string) => testsForEnvironment(suite, env).map((t) => (t.type === 'playwright' ? t.case?.entry : undefined));
  assert.deepEqual(entries('prod'), ['smoke', 'smoke']);
  assert.deepEqual(entries('staging'), ['full', 'full', 'full']);
});

test('entries over one suite that share an environment name every case after their entry, everywhere', async () => {
  const suite = await load(writeConfig(`
  - { name: smoke, type: playwright, dir: e2e, grep: "@smoke", environments: [prod, staging] }
  - { name: full, type: playwright, dir: e2e, environments: [staging] }
  - { name: health, type: command, run: ["true"] }
`));
  assert.deepEqual(namesIn(suite, 'prod'), [...SMOKE.map((n) => `smoke › ${n}`), 'health']);
  assert.deepEqual(namesIn(suite, 'staging'), [...SMOKE.map((n) => `smoke › ${n}`), ...ALL.map((n) => `full › ${n}`), 'health'], 'the command test keeps its name');
});

test('a case named like an http or command test of a shared environment takes the prefix; the test keeps its name', async () => {
  const suite = await load(writeConfig(`
  - { name: "shop.spec.ts › home @smoke", type: command, run: ["true"], environments: [staging] }
  - { name: smoke, type: playwright, dir: e2e, grep: "@smoke" }
`));
  assert.deepEqual(namesIn(suite, 'staging'), ['shop.spec.ts › home @smoke', ...SMOKE.map((n) => `smoke › ${n}`)]);
  assert.deepEqual(namesIn(suite, 'prod'), SMOKE.map((n) => `smoke › ${n}`), 'one name per entry, in every environment');
});

test('a name that still clashes in an environment is a config error naming it', async () => {
  const file = writeConfig(`
  - { name: smoke, type: playwright, dir: e2e, grep: "@smoke", environments: [staging] }
  - { name: full, type: playwright, dir: e2e, environments: [staging] }
  - { name: "full › shop.spec.ts › home @smoke", type: command, run: ["true"], environments: [staging] }
`);
  const error = await load(file).then(
    () => assert.fail('expected a ConfigError'),
    (err: unknown) => err,
  );
  assert.ok(error instanceof ConfigError, String(error));
  assert.match(error.message, /two tests of environment "staging" are both named "full › shop\.spec\.ts › home @smoke"/);
});
