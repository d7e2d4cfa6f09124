/**
 * `runset init`'s reading of a repository (src/config/init/): which reads of
 * the environment become declared variables with which default, which are
 * left to the workers, and what is never read (comments, node_modules, files
 * past the bounds).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findSuites, readPlaywrightConfig } from '../../src/config/init/suites.js';
import { findVariables, MAX_SCANNED_FILES } from '../../src/config/init/variables.js';
import { MAX_FILE_BYTES, withoutComments } from '../../src/config/init/source-text.js';
import { planConfig } from '../../src/config/init/write.js';


/** This checkout: dist/test/unit/ is three levels down. */
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function repository(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'runset-init-scan-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

function declared(root: string): Record<string, string | undefined> {
  return Object.fromEntries(findVariables(findSuites(root)).declared.map((v) => [v.name, v.fallback]));
}

test('reads with their defaults: strings, numbers, not templates; user PLAYWRIGHT_* names kept, runner ones left out', () => {
  const root = repository({
    'playwright.config.ts': [
      "const PORT = Number(process.env.PORT || 3001);",
      'const BASE = process.env.PLAYWRIGHT_BASE_URL || `http://localhost:${PORT}`;',
      "const TOKEN = process.env[\"API_TOKEN\"] ?? '';",
      "const out = process.env.PLAYWRIGHT_HTML_REPORT; const ci = process.env.CI; const o = process.env.NODE_OPTIONS;",
      "export default { use: { baseURL: BASE, extraHTTPHeaders: { 'x-shop': process.env.SHOP ?? \"main\" } } };",
    ].join('\n'),
  });
  assert.deepEqual(declared(root), { PORT: '3001', PLAYWRIGHT_BASE_URL: undefined, API_TOKEN: undefined, SHOP: 'main' });
  assert.deepEqual(findVariables(findSuites(root)).leftOut, ['CI', 'NODE_OPTIONS', 'PLAYWRIGHT_HTML_REPORT'], 'ambient and refused names are reported, not declared');
});

test('destructuring of process.env and import.meta.env, with defaults; aliases, rests and Vite\'s own names are no variables', () => {
  const root = repository({
    'playwright.config.ts': [
      "const { BASE_URL, TOKEN = 'x', 'SHOP_ID': shop, RETRIES: retries = 2, ...rest } = process.env;",
      'let { ONLY_NAME }: NodeJS.ProcessEnv = process.env, other = 1;',
      "const { nested: { INNER } } = process.env; const { NOT_ENV } = process.env.CONFIG_JSON ?? {};",
      "export default { use: { baseURL: BASE_URL, headers: { t: TOKEN, s: shop, r: retries, o: ONLY_NAME } }, rest };",
    ].join('\n'),
    'tests/app.spec.ts': [
      "const api = import.meta.env.VITE_API_URL ?? 'http://localhost:5173/api';",
      "const key = import.meta.env['VITE_KEY']; const { VITE_MODE_NAME = 'dev', MODE, DEV } = import.meta.env;",
      'if (import.meta.env.PROD || import.meta.env.MODE === import.meta.env.BASE_URL || import.meta.env.SSR) void 0;',
    ].join('\n'),
  });
  assert.deepEqual(declared(root), {
    BASE_URL: undefined, TOKEN: 'x', SHOP_ID: undefined, RETRIES: '2', ONLY_NAME: undefined, CONFIG_JSON: undefined,
    VITE_API_URL: 'http://localhost:5173/api', VITE_KEY: undefined, VITE_MODE_NAME: 'dev',
  });
  const found = findVariables(findSuites(root));
  assert.deepEqual(found.leftOut, [], 'shop, retries, rest, nested, INNER, NOT_ENV, MODE, DEV, PROD, SSR and BASE_URL of Vite are not reported at all');
  assert.deepEqual(found.declared.map((v) => v.name).slice(0, 5), ['BASE_URL', 'TOKEN', 'SHOP_ID', 'RETRIES', 'ONLY_NAME'], 'in the order written');
});

test('only names of variables: no methods, no names the code sets or deletes, no computed names', () => {
  const root = repository({
    'playwright.config.ts': [
      "if (process.env.hasOwnProperty('X') || Object.hasOwn(process.env, 'Y')) process.env.toString();",
      "process.env.SET_HERE = 'yes'; process.env['SET_TOO'] = '1'; delete process.env.DELETED; delete process.env['DELETED_TOO'];",
      'for (let i = 0; i < 3; i++) void process.env[`SHARD_${i}`]; const k = process.env[name];',
      "process.env.DEFAULTED ??= 'b'; const kept = process.env.COMPARED === 'a'; export default { kept, m: process.env.CALLED_ON.trim() };",
      'void foo.process.env.NOT_PROCESS;',
    ].join('\n'),
  });
  const found = findVariables(findSuites(root));
  assert.deepEqual(Object.keys(declared(root)), ['DEFAULTED', 'COMPARED', 'CALLED_ON']);
  assert.deepEqual(found.leftOut, []);
});

test('comments, strings that look like comments, node_modules and oversized files', () => {
  assert.equal(withoutComments("a('http://x') // process.env.GONE\n/* process.env.GONE2 */b"), "a('http://x') \n b");
  assert.equal(withoutComments('x = os.getenv("A")  # os.getenv("B")\n', true), 'x = os.getenv("A")  \n');
  const root = repository({
    'e2e/playwright.config.ts': "// webServer: { command: 'npm start' },\nexport default { testDir: './specs', projects: [{ name: 'setup', use: { name: 'not a project' } }, { name: 'chromium' }] };\n",
    'e2e/specs/a.spec.ts': 'process.env.IN_TEST_DIR;',
    'e2e/other/b.spec.ts': 'process.env.OUTSIDE_TEST_DIR;',
    'e2e/specs/big.spec.ts': `process.env.IN_BIG_FILE;${' '.repeat(MAX_FILE_BYTES)}`,
    'node_modules/x/playwright.config.ts': 'process.env.IN_NODE_MODULES;',
  });
  const suites = findSuites(root);
  assert.deepEqual(suites.map((s) => [s.type, path.relative(root, s.dir)]), [['playwright', 'e2e']]);
  const facts = readPlaywrightConfig(suites[0]!.files[0]!);
  assert.deepEqual(facts.projects, ['setup', 'chromium'], 'names of nested objects are not projects');
  assert.equal(facts.webServer, undefined, 'a commented-out webServer is none');
  assert.equal(facts.testDir, path.join(root, 'e2e', 'specs'));
  assert.deepEqual(Object.keys(declared(root)), ['IN_TEST_DIR']);
});

test('python reads, Postman placeholders with the collection\'s own values, and the file bound', () => {
  const many = Object.fromEntries(Array.from({ length: MAX_SCANNED_FILES + 20 }, (_, i) => [`js/test/t${String(i).padStart(4, '0')}.test.js`, `process.env.V${i};`]));
  const root = repository({
    'pyproject.toml': '[tool.pytest.ini_options]\naddopts = "-q"\n',
    'tests/test_a.py': 'import os\nos.environ["SHOP_URL"]\nos.environ.get("USER_NAME", "demo")\nos.getenv(\'RETRIES\')\n',
    'api.postman_collection.json': JSON.stringify({ item: [{ request: { url: '{{HOST}}/x?{{$timestamp}}&{{bad-name}}' } }], variable: [{ key: 'HOST', value: 'http://localhost:8080' }] }),
    'js/package.json': JSON.stringify({ scripts: { test: 'mocha --recursive' } }),
    ...many,
  });
  assert.deepEqual(findSuites(root).map((s) => `${s.type} ${path.relative(root, s.dir) || '.'}`), ['pytest .', 'newman .', 'mocha js']);
  const found = findVariables(findSuites(root));
  assert.equal(found.scanned, MAX_SCANNED_FILES);
  const names = Object.fromEntries(found.declared.map((v) => [v.name, v.fallback]));
  assert.deepEqual([names.SHOP_URL, names.USER_NAME, names.RETRIES, names.HOST], [undefined, 'demo', undefined, 'http://localhost:8080']);
  assert.ok(found.leftOut.includes('bad-name') && !found.leftOut.includes('$timestamp'));
});

test('Vitest set up inside vite.config or by any package.json script; a vite.config without tests is no suite', () => {
  const root = repository({
    'app/vite.config.ts': "export default { plugins: [], test: { include: ['src/**/*.test.ts'] } };\n",
    'site/vite.config.ts': "export default { plugins: [] }; // test: { } is only a comment here\n",
    'lib/package.json': JSON.stringify({ scripts: { test: 'playwright test', 'test:unit': 'vitest run' } }),
  });
  assert.deepEqual(findSuites(root).map((s) => `${s.type} ${path.relative(root, s.dir)}`), ['vitest app', 'vitest lib']);
});

test('pytest by its shallowest conftest.py where no pytest config covers it', () => {
  const root = repository({
    'conftest.py': '',
    'tests/conftest.py': '',
    'tests/test_a.py': 'import os\nos.getenv("BASE_URL", "https://jsonplaceholder.typicode.com")\n',
    'svc/pytest.ini': '[pytest]\n',
    'svc/tests/conftest.py': '',
  });
  assert.deepEqual(findSuites(root).map((s) => `${s.type} ${path.relative(root, s.dir) || '.'} ${s.files.map((f) => path.relative(root, f)).join(',')}`), ['pytest . conftest.py', 'pytest svc svc/pytest.ini']);
  assert.deepEqual(declared(root), { BASE_URL: 'https://jsonplaceholder.typicode.com' });
});

test('the written config names runset\'s JSON Schema for editors only when runset is installed inside its folder', () => {
  const root = repository({ 'e2e/playwright.config.ts': 'export default {};\n' });
  const inside = planConfig(root, path.join(REPO_ROOT, 'runset.config.yaml'), 'local').text;
  assert.equal(inside.split('\n')[0], '# yaml-language-server: $schema=./schema/runset.config.schema.json');
  assert.ok(existsSync(path.join(REPO_ROOT, 'schema', 'runset.config.schema.json')));
  const outside = planConfig(root, path.join(root, 'runset.config.yaml'), 'local').text;
  assert.match(outside, /^# Written by `runset init`/);
  assert.doesNotMatch(outside, /yaml-language-server/);
});
