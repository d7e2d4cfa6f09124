/**
 * A small browser-free Playwright suite for the version matrix, as an ES module
 * package with a TypeScript config (package.json "type": "module",
 * playwright.config.ts) or as a CommonJS one (playwright.config.js with
 * require), with a pass, a failure, skips, a retry that passes (flaky), an
 * expected failure and console output. Its node_modules is a link to one
 * installed @playwright/test version, so it is the suite's own Playwright.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export type ModuleKind = 'esm' | 'cjs';

const BODY = `
test.describe('group', () => {
  test('passes', async () => {
    console.log('hello from passes');
    expect(1 + 1).toBe(2);
  });
  test('fails', async () => {
    expect(1 + 1, 'arithmetic still works').toBe(3);
  });
});
// The two skips below are the subject under test, not tests left out: runset must
// report a Playwright test that skips itself, and one skipped where declared (never
// run, no worker), as skipped. Each prints why: the first in its skip's reason; the
// second in its title, since a declared skip takes no reason before Playwright 1.42,
// and a group-level skip with a reason is run in a worker by newer Playwrights.
test('skips itself', async () => {
  test.skip(true, 'this fixture skips itself on purpose: runset must report it as skipped');
});
test.skip('skipped where declared, on purpose: runset must report a test that never runs as skipped', async () => {});
test('passes on retry', async ({}, testInfo) => {
  expect(testInfo.retry, 'the first attempt fails').toBeGreaterThan(0);
});
test('is expected to fail', async () => {
  test.fail();
  expect(true).toBe(false);
});
`;

const CONFIG_BODY = `{ testDir: 'tests', retries: 1, workers: 2, reporter: 'list' }`;

/**
 * Writes the suite into `dir` (its spec file named after `tag`, so names stay
 * unique across suites) linked to `modules`; without `modules` it has no
 * Playwright of its own, and runset lends it its own.
 */
export function writeCompatSuite(dir: string, kind: ModuleKind, tag: string, modules: string | undefined): void {
  mkdirSync(path.join(dir, 'tests'), { recursive: true });
  if (modules !== undefined) symlinkSync(modules, path.join(dir, 'node_modules'), 'dir');
  if (kind === 'esm') {
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `compat-${tag}`, private: true, type: 'module' }));
    writeFileSync(path.join(dir, 'playwright.config.ts'), `import { defineConfig } from '@playwright/test';\nexport default defineConfig(${CONFIG_BODY});\n`);
    writeFileSync(path.join(dir, 'tests', `${tag}.spec.ts`), `import { test, expect } from '@playwright/test';\n${BODY}`);
  } else {
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `compat-${tag}`, private: true }));
    writeFileSync(path.join(dir, 'playwright.config.js'), `const { defineConfig } = require('@playwright/test');\nmodule.exports = defineConfig(${CONFIG_BODY});\n`);
    writeFileSync(path.join(dir, 'tests', `${tag}.spec.js`), `const { test, expect } = require('@playwright/test');\n${BODY}`);
  }
}

/**
 * A CommonJS suite with three projects as in Playwright's starter config: a
 * `setup` project (its tests matched by `testMatch: /.*\.setup\.js/`) and two
 * projects that depend on it. Setup leaves a file named after its runner's pid;
 * a dependent test checks that its own runner's is there, so it proves setup ran
 * first in the same Playwright process (project dependencies exist since 1.31;
 * 1.30 runs setup as one more project, in any order, and the check is skipped).
 * `beta` fails one test and retries it once; browser-free, as the matrix is.
 */
export function writeProjectsSuite(dir: string, tag: string, modules: string): void {
  mkdirSync(path.join(dir, 'tests'), { recursive: true });
  symlinkSync(modules, path.join(dir, 'node_modules'), 'dir');
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `projects-${tag}`, private: true }));
  writeFileSync(path.join(dir, 'playwright.config.js'), `const { defineConfig } = require('@playwright/test');
module.exports = defineConfig({ testDir: 'tests', workers: 2, reporter: 'list', projects: [
  { name: 'setup', testMatch: /.*\\.setup\\.js/ },
  { name: 'alpha', dependencies: ['setup'] },
  { name: 'beta', dependencies: ['setup'], retries: 1 },
] });
`);
  writeFileSync(path.join(dir, 'tests', `${tag}.setup.js`), `const { test: setup } = require('@playwright/test');
const { writeFileSync } = require('node:fs');
const path = require('node:path');
setup('prepare', async () => {
  writeFileSync(path.join(__dirname, '..', 'prepared-' + process.ppid), 'by the setup project');
});
`);
  writeFileSync(path.join(dir, 'tests', `${tag}.spec.js`), `const { test, expect } = require('@playwright/test');
const { existsSync } = require('node:fs');
const path = require('node:path');
test('sees what setup prepared', async ({}, info) => {
  if (info.project.dependencies?.length) expect(existsSync(path.join(__dirname, '..', 'prepared-' + process.ppid)), 'setup ran first').toBe(true);
});
test('fails in beta only', async ({}, info) => {
  expect(info.project.name, 'the project').not.toBe('beta');
});
`);
}

/** One case as Playwright reports it when run directly. */
export interface DirectCase {
  name: string;
  status: 'expected' | 'unexpected' | 'flaky' | 'skipped';
  attempts: number;
  /** The first line of its first error, colours removed. */
  error: string | null;
}

/** A process's whole stdout and stderr, and how it exited (killed after `timeoutMs`). */
function collect(program: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<{ stdout: string; stderr: string; status: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ stdout, stderr, status }));
  });
}

/** Calls `fn` on every item, at most `limit` at once (the machine's cores), in order of the answers' items. */
export async function eachAtMost<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const answers = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      answers[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return answers;
}

interface JsonSuite {
  title: string;
  specs?: Array<{ title: string; file: string; tests: Array<{ projectName?: string; status: DirectCase['status']; results: Array<{ error?: { message?: string } }> }> }>;
  suites?: JsonSuite[];
}

/**
 * Runs the suite with `playwright test --reporter=json` (no runset involved, plus
 * `args`) and returns its cases by name, prefixed `[project] ›` when the run had
 * several projects, as runset names them.
 */
export async function runDirectly(dir: string, cli: string, args: readonly string[] = []): Promise<Map<string, DirectCase>> {
  const res = await collect(process.execPath, [cli, 'test', '--reporter=json', ...args], dir, 120_000);
  let report: { suites?: JsonSuite[] };
  try {
    report = JSON.parse(res.stdout.slice(res.stdout.indexOf('{'))) as { suites?: JsonSuite[] };
  } catch {
    throw new Error(`the direct run in ${dir} gave no JSON report (exit ${res.status}): ${res.stderr}`);
  }
  const found: Array<DirectCase & { project: string; path: string[] }> = [];
  const walk = (suite: JsonSuite, titles: string[]): void => {
    for (const spec of suite.specs ?? []) {
      for (const t of spec.tests) {
        const message = t.results.find((r) => r.error?.message)?.error?.message;
        // eslint-disable-next-line no-control-regex -- terminal colour codes begin with ESC
        const error = message ? (message.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '').split('\n')[0] ?? '').trim() : null;
        const path = [spec.file, ...titles, spec.title];
        found.push({ name: '', project: t.projectName ?? '', path, status: t.status, attempts: t.results.length, error });
      }
    }
    for (const child of suite.suites ?? []) walk(child, [...titles, child.title]);
  };
  for (const fileSuite of report.suites ?? []) walk(fileSuite, []);
  const several = new Set(found.map((c) => c.project)).size > 1;
  return new Map(found.map(({ project, path, ...c }) => {
    const name = [...(several ? [`[${project}]`] : []), ...path].join(' › ');
    return [name, { ...c, name }];
  }));
}
