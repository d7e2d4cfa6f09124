/**
 * bench:frameworks' suites: per framework `type:`, how to write a suite of
 * `cases` cases (PER_FILE a file, each a short timer and a little arithmetic:
 * real framework work, no I/O beyond its files), the entry runset runs it
 * with, and the framework's own command that runs it directly. Both sides run
 * one framework worker, what a share of one slot gets. A framework joins the
 * bench by adding its row.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { FRAMEWORK_VERSIONS, NEWMAN_VERSIONS } from '../test/helpers/framework-versions.js';
import { frameworkCli, frameworkPackage, type FrameworkKind } from '../test/e2e/framework-fixtures.js';
import { PYTHON } from '../test/e2e/framework-fixtures-pytest.js';

const PER_FILE = 10;

export interface BenchContext {
  /** The installed node_modules of `pkg` (absent for pytest). */
  modules: string;
  /** A local HTTP server answering 200 on every path (Newman's requests). */
  baseUrl: string;
}

export interface SuiteFixture {
  /** The npm package to install from npm (undefined: not from npm, as pytest). */
  pkg?: string;
  version: string;
  write(dir: string, cases: number): void;
  /** Extra fields of the runset entry (YAML flow), after `type` and `dir`. */
  entry?: string;
  /** The framework's own command line, run in the suite's folder. */
  direct(ctx: BenchContext): { command: string; args: string[] };
}

function files(cases: number, name: (index: number) => string): Array<{ name: string; tests: number[] }> {
  const out: Array<{ name: string; tests: number[] }> = [];
  for (let start = 0; start < cases; start += PER_FILE) {
    out.push({ name: name(out.length), tests: Array.from({ length: Math.min(PER_FILE, cases - start) }, (_, k) => start + k) });
  }
  return out;
}

const pad = (n: number) => String(n).padStart(3, '0');
const newest = (versions: readonly string[]) => versions[versions.length - 1]!;
const node = (kind: FrameworkKind, ...args: string[]) => (ctx: BenchContext) => ({ command: process.execPath, args: [frameworkCli(kind, ctx.modules), ...args] });
const TIMER = 'await new Promise((r) => setTimeout(r, 2));';

function jsFiles(dir: string, cases: number, header: string, folder = '.'): void {
  mkdirSync(path.join(dir, folder), { recursive: true });
  for (const f of files(cases, (i) => `f${pad(i)}.test.js`)) {
    const tests = f.tests.map((i) => `  test('case ${i}', async () => { ${TIMER} expect(${i} * 2).toBe(${i * 2}); });`).join('\n');
    writeFileSync(path.join(dir, folder, f.name), `${header}describe('${f.name}', () => {\n${tests}\n});\n`);
  }
}

export const SUITES: Record<string, SuiteFixture> = {
  vitest: {
    pkg: frameworkPackage('vitest'),
    version: newest(FRAMEWORK_VERSIONS.vitest),
    write(dir, cases) {
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'bench-vitest', private: true, type: 'module' }));
      jsFiles(dir, cases, "import { describe, test, expect } from 'vitest';\n");
    },
    entry: 'workers: 1',
    direct: node('vitest', 'run', '--maxWorkers=1'),
  },
  jest: {
    pkg: frameworkPackage('jest'),
    version: newest(FRAMEWORK_VERSIONS.jest),
    write(dir, cases) {
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'bench-jest', private: true }));
      jsFiles(dir, cases, '');
    },
    entry: 'workers: 1',
    direct: node('jest', '--ci', '--maxWorkers=1'),
  },
  mocha: {
    pkg: frameworkPackage('mocha'),
    version: newest(FRAMEWORK_VERSIONS.mocha),
    write(dir, cases) {
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'bench-mocha', private: true }));
      // Mocha's default spec: ./test/*.{js,cjs,mjs}; `test` and `expect` from node:assert in its words.
      jsFiles(dir, cases, "const assert = require('node:assert');\nconst test = it;\nconst expect = (a) => ({ toBe: (b) => assert.strictEqual(a, b) });\n", 'test');
    },
    direct: node('mocha', '--reporter', 'dot'),
  },
  cucumber: {
    pkg: frameworkPackage('cucumber'),
    version: newest(FRAMEWORK_VERSIONS.cucumber),
    write(dir, cases) {
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'bench-cucumber', private: true }));
      mkdirSync(path.join(dir, 'features'), { recursive: true });
      writeFileSync(path.join(dir, 'cucumber.json'), JSON.stringify({ default: { paths: ['features/*.feature'], require: ['features/steps.js'] } }));
      writeFileSync(
        path.join(dir, 'features', 'steps.js'),
        "const { Given, Then } = require('@cucumber/cucumber');\nconst assert = require('node:assert');\n" +
          `Given('the number {int}', async function (n) { this.n = n; ${TIMER} });\n` +
          "Then('doubled it is {int}', function (m) { assert.strictEqual(this.n * 2, m); });\n",
      );
      for (const f of files(cases, (i) => `f${pad(i)}.feature`)) {
        const scenarios = f.tests.map((i) => `  Scenario: case ${i}\n    Given the number ${i}\n    Then doubled it is ${i * 2}\n`).join('');
        writeFileSync(path.join(dir, 'features', f.name), `Feature: ${f.name}\n${scenarios}`);
      }
    },
    direct: node('cucumber', '--format', 'summary'),
  },
  pytest: {
    version: 'Debian',
    write(dir, cases) {
      for (const f of files(cases, (i) => `test_f${pad(i)}.py`)) {
        const tests = f.tests.map((i) => `def test_case_${i}():\n    time.sleep(0.002)\n    assert ${i} * 2 == ${i * 2}\n`).join('\n');
        writeFileSync(path.join(dir, f.name), `import time\n\n${tests}`);
      }
    },
    entry: `python: ${PYTHON}`,
    direct: () => ({ command: PYTHON, args: ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'] }),
  },
  newman: {
    pkg: 'newman',
    version: newest(NEWMAN_VERSIONS),
    write(dir, cases) {
      const status = (i: number) => [{ listen: 'test', script: { type: 'text/javascript', exec: [`pm.test('case ${i} answers 200', () => pm.response.to.have.status(200));`] } }];
      const item = files(cases, (i) => `folder ${pad(i)}`).map((f) => ({
        name: f.name,
        item: f.tests.map((i) => ({ name: `case ${i}`, request: { method: 'GET', url: `{{BASE_URL}}/case/${i}` }, event: status(i) })),
      }));
      const collection = { info: { name: 'bench', schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json' }, item };
      writeFileSync(path.join(dir, 'bench.postman_collection.json'), JSON.stringify(collection));
    },
    entry: 'collection: bench.postman_collection.json',
    direct: (ctx) => ({ command: process.execPath, args: [frameworkCli('newman' as FrameworkKind, ctx.modules), 'run', 'bench.postman_collection.json', '--env-var', `BASE_URL=${ctx.baseUrl}`, '--reporters', 'cli'] }),
  },
};
