/**
 * `runset init`: the real CLI in a temp repository holding a Playwright suite
 * (projects, webServer, process.env.BASE_URL), a Vitest config, a package.json
 * Jest setup, a pytest.ini and a Postman collection. The file it writes loads
 * with runset's own loader, names those suites and declares those variables;
 * it is never overwritten without --force.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadSuiteConfig } from '../../src/config/suite.js';
import { CLI, tempDir } from '../helpers/server.js';

function runset(cwd: string, ...args: string[]) {
  const { RUNSET_CONFIG: _unused, ...env } = process.env;
  const res = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 60_000, env });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

function write(root: string, file: string, text: string): void {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), text);
}

const PLAYWRIGHT_CONFIG = `import { defineConfig, devices } from '@playwright/test';
// const old = process.env.COMMENTED_OUT;
export default defineConfig({
  testDir: 'tests',
  forbidOnly: !!process.env.CI,
  use: { baseURL: process.env.BASE_URL ?? 'http://localhost:3000' },
  projects: [
    { name: 'chromium', use: { ...devices['Desktop Chrome'] } },
    { name: 'firefox', use: { ...devices['Desktop Firefox'] } },
  ],
  webServer: { command: 'npm run start', url: 'http://localhost:3000', reuseExistingServer: !process.env.CI },
});
`;

/** A Playwright suite in e2e/ (runset lends it its @playwright/test); `all` adds one suite of every other kind. */
function repository(all: boolean): string {
  const root = tempDir('runset-init-');
  write(root, 'e2e/playwright.config.ts', PLAYWRIGHT_CONFIG);
  write(root, 'e2e/tests/home.spec.ts', "import { test } from '@playwright/test';\ntest('home', async () => { void process.env['API_TOKEN']; });\n");
  write(root, 'node_modules/some-lib/playwright.config.ts', 'export default { use: { baseURL: process.env.NOT_OURS } };\n');
  if (!all) return root;
  write(root, 'web/vitest.config.ts', "export default { test: { env: { API: process.env.WEB_API_URL || 'http://localhost:5173/api' } } };\n");
  write(root, 'api/package.json', JSON.stringify({ name: 'api', scripts: { test: 'jest' }, jest: { testEnvironment: 'node' } }));
  write(root, 'api/test/orders.test.js', "test('orders', () => expect(process.env.DB_HOST).toBeDefined());\n");
  write(root, 'py/pytest.ini', '[pytest]\ntestpaths = tests\n');
  write(root, 'py/tests/test_login.py', 'import os\n\ndef test_login():\n    assert os.environ.get("SHOP_USER", "demo")\n');
  const collection = {
    info: { name: 'shop', schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json' },
    item: [{ name: 'health', request: { method: 'GET', url: '{{BASE_URL}}/health?id={{$guid}}&shop={{SHOP_ID}}' } }],
    variable: [{ key: 'SHOP_ID', value: '42' }],
  };
  write(root, 'postman/shop.postman_collection.json', JSON.stringify(collection, null, 2));
  return root;
}

test('init writes a config that runset loads, with every suite found and the variables they read', () => {
  const root = repository(true);
  const out = runset(root, 'init');
  assert.equal(out.code, 0, out.stderr);
  const file = path.join(root, 'runset.config.yaml');
  const config = loadSuiteConfig(file);
  assert.deepEqual(
    config.tests.map((t) => [t.name, t.type, 'dir' in t ? path.relative(root, t.dir) : '']),
    [
      ['jest api', 'jest', 'api'],
      ['playwright e2e', 'playwright', 'e2e'],
      ['newman postman/shop', 'newman', 'postman'],
      ['pytest py', 'pytest', 'py'],
      ['vitest web', 'vitest', 'web'],
    ],
  );
  const newman = config.tests.find((t) => t.type === 'newman');
  assert.equal(newman && 'collection' in newman ? newman.collection : undefined, 'shop.postman_collection.json');
  assert.deepEqual([...config.environments.keys()], ['local']);
  const variables = config.environments.get('local')!.variables;
  assert.deepEqual(variables, {
    DB_HOST: { kind: 'plain', value: 'change-me' },
    BASE_URL: { kind: 'plain', value: 'http://localhost:3000' },
    API_TOKEN: { kind: 'env', name: 'API_TOKEN' },
    SHOP_ID: { kind: 'plain', value: '42' },
    SHOP_USER: { kind: 'plain', value: 'demo' },
    WEB_API_URL: { kind: 'plain', value: 'http://localhost:5173/api' },
  });
  const text = readFileSync(file, 'utf8');
  assert.match(text, /# Projects: chromium, firefox; every one runs \("project: chromium" keeps one\)\./);
  assert.match(text, /# Its webServer \(npm run start\) is started by Playwright on the worker/);
  assert.match(text, /BASE_URL: http:\/\/localhost:3000 # read by e2e\/playwright\.config\.ts, postman\/shop\.postman_collection\.json \(the default in e2e\/playwright\.config\.ts\)/);
  assert.match(text, /left to the workers' environment \(not declared\): CI\./);
  assert.doesNotMatch(text, /COMMENTED_OUT|NOT_OURS/, 'comments and node_modules are not read');
  assert.match(out.stderr, /wrote .*runset\.config\.yaml: 5 entries \(jest api, playwright e2e, newman postman\/shop, pytest py, vitest web\)/);
  assert.equal(runset(root, 'check', '--no-list').code, 0, 'check (without listing) loads it as serve does');
});

test('init never overwrites without --force, and writes nothing where it finds no suite', () => {
  const root = repository(false);
  const file = path.join(root, 'runset.config.yaml');
  writeFileSync(file, 'mine\n');
  const refused = runset(root, 'init');
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /runset\.config\.yaml already exists; runset init does not overwrite it without --force/);
  assert.equal(readFileSync(file, 'utf8'), 'mine\n', 'the file is untouched');
  const forced = runset(root, 'init', '--force', '--env', 'staging');
  assert.equal(forced.code, 0, forced.stderr);
  assert.deepEqual([...loadSuiteConfig(file).environments.keys()], ['staging']);

  const empty = tempDir('runset-init-empty-');
  const nothing = runset(empty, 'init');
  assert.equal(nothing.code, 2);
  assert.match(nothing.stderr, /found no test suite under .*; nothing was written/);
  assert.equal(existsSync(path.join(empty, 'runset.config.yaml')), false);
});

test('init then check: the Playwright suite is listed into its cases, every project', () => {
  const root = repository(false);
  assert.equal(runset(root, 'init').code, 0);
  const checked = runset(root, 'check');
  assert.equal(checked.code, 0, checked.stderr);
  assert.equal(checked.stdout, 'local: 2 tests\n  playwright e2e (playwright, 2 cases)\n    [chromium] › home.spec.ts › home\n    [firefox] › home.spec.ts › home\n');
});
