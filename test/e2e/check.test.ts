/**
 * `runset check`: the real CLI on configs in temp folders. A good config lists
 * each environment's tests (a Playwright entry's cases listed by Playwright, no
 * browser needed) and exits 0; a bad one, or one whose entry cannot be listed,
 * exits with `serve`'s exit code and `serve`'s words.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, tempDir } from '../helpers/server.js';

function runset(cwd: string, ...args: string[]) {
  const { RUNSET_CONFIG: _unused, ...env } = process.env; // the default, ./runset.config.yaml, is what these tests use
  const res = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 60_000, env });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

/** A folder with a two-case Playwright suite in e2e/ (no node_modules: runset lends its @playwright/test) and `yaml` as its config. */
function suiteFolder(yaml: string): string {
  const dir = tempDir('runset-check-');
  mkdirSync(path.join(dir, 'e2e', 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'e2e', 'playwright.config.ts'), "import { defineConfig } from '@playwright/test';\nexport default defineConfig({ testDir: 'tests' });\n");
  writeFileSync(
    path.join(dir, 'e2e', 'tests', 'home.spec.ts'),
    "import { test } from '@playwright/test';\ntest.describe('home', () => {\n  test('shows a title', async () => {});\n  test('links to the shop', async () => {});\n});\n",
  );
  writeFileSync(path.join(dir, 'runset.config.yaml'), yaml);
  return dir;
}

const GOOD = `environments:
  staging: { variables: { BASE_URL: https://staging.example.com } }
  prod: { variables: { BASE_URL: https://example.com } }
tests:
  - { name: health, type: http, request: { url: "{{BASE_URL}}/health" } }
  - { name: contract, type: command, run: ["true"], environments: [staging] }
  - { name: browser, type: playwright, dir: e2e }
`;

test('check lists the tests of each environment, a Playwright entry by its cases, and exits 0', () => {
  const dir = suiteFolder(GOOD);
  const out = runset(dir, 'check');
  assert.equal(out.code, 0, out.stderr);
  assert.equal(
    out.stdout,
    [
      'staging: 4 tests',
      '  health (http)',
      '  contract (command)',
      '  browser (playwright, 2 cases)',
      '    home.spec.ts › home › shows a title',
      '    home.spec.ts › home › links to the shop',
      'prod: 3 tests',
      '  health (http)',
      '  browser (playwright, 2 cases)',
      '    home.spec.ts › home › shows a title',
      '    home.spec.ts › home › links to the shop',
      '',
    ].join('\n'),
  );
  assert.match(out.stderr, /runset\.config\.yaml is valid\n$/);

  const quick = runset(dir, 'check', '--no-list');
  assert.equal(quick.code, 0, quick.stderr);
  assert.match(quick.stdout, /^staging: 2 tests and 1 entry not listed\n {2}health \(http\)\n {2}contract \(command\)\n {2}browser \(playwright, not listed: --no-list\)\n/);
});

/** What `serve` says of the config in `dir`, and its exit code: it stops before it listens. */
function serveOn(dir: string) {
  return runset(dir, 'serve', '--port', '0', '--data-dir', path.join(dir, 'data'), '--workers', '0');
}

test('a bad config: check exits as serve does, with the words serve prints', () => {
  const dir = suiteFolder(GOOD.replace('{{BASE_URL}}/health', '{{BASE_ULR}}/health'));
  const served = serveOn(dir);
  assert.equal(served.code, 2, served.stderr);
  for (const args of [['check'], ['check', '--no-list'], ['check', '-c', 'runset.config.yaml']]) {
    const checked = runset(dir, ...args);
    assert.equal(checked.code, served.code, checked.stderr);
    assert.equal(checked.stderr, served.stderr);
    assert.match(checked.stderr, /^runset: .*runset\.config\.yaml: tests\[0\]\.request\.url: \{\{BASE_ULR\}\} is not declared in environment "staging", "prod"; expected /);
    assert.equal(checked.stdout, '');
  }
  const missing = runset(dir, 'check', '-c', 'nowhere.yaml');
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /nowhere\.yaml: \(file\): no such file \(ENOENT\)/);
});

test('an entry that cannot be listed fails check as it fails serve; --no-list checks the file alone', () => {
  const dir = suiteFolder(GOOD.replace('dir: e2e }', 'dir: e2e, project: firefox }'));
  const checked = runset(dir, 'check');
  const served = serveOn(dir);
  assert.equal(served.code, 2, served.stderr);
  assert.equal(checked.code, 2);
  assert.equal(checked.stderr, served.stderr);
  assert.match(checked.stderr, /tests\[2\]: Playwright suite "browser" .*firefox/);
  assert.equal(runset(dir, 'check', '--no-list').code, 0, 'the file itself is valid');
});
