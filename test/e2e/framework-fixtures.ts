/**
 * A small suite per framework for the version matrix (Mocha's and Cucumber's
 * in ./framework-fixtures-mocha.ts and ./framework-fixtures-cucumber.ts): a pass that prints, a
 * failure, a skip, a case that passes on its retry (flaky) and a top-level
 * case. Its node_modules is a link to one installed version of the framework,
 * so the suite runs its own framework. `runDirectly` runs it as a person
 * would, with the framework's own JSON report, and reads that report here
 * (not with runset's reader) as the reference.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCucumberDirectly, writeCucumberSuite } from './framework-fixtures-cucumber.js';
import { runMochaDirectly, writeMochaSuite } from './framework-fixtures-mocha.js';

export type FrameworkKind = 'vitest' | 'jest' | 'mocha' | 'cucumber';

/** The npm package of each framework, where it is not the framework's `type:`. */
const PACKAGES: Partial<Record<FrameworkKind, { name: string; bin: string }>> = { cucumber: { name: '@cucumber/cucumber', bin: 'cucumber-js' } };

/** The npm package that installs `kind`. */
export function frameworkPackage(kind: FrameworkKind): string {
  return PACKAGES[kind]?.name ?? kind;
}

/** How many cases the suite of `kind` has, and how many of them fail (Cucumber's adds an outline of two rows and an undefined step). */
export function suiteShape(kind: FrameworkKind): { cases: number; failed: number } {
  return kind === 'cucumber' ? { cases: 8, failed: 2 } : { cases: 5, failed: 1 };
}

/** Vitest: ES modules, retries per test. */
const VITEST = `import { describe, test, expect } from 'vitest';
let tries = 0;
describe('group', () => {
  test('passes', () => {
    console.log('hello from passes');
    expect(1 + 1).toBe(2);
  });
  test('fails', () => {
    expect(1 + 1, 'arithmetic still works').toBe(3);
  });
  // The skip is the subject under test: runset must report a case that never runs as skipped.
  test.skip('skipped on purpose', () => {});
  test('passes on retry', { retry: 1 }, () => {
    tries += 1;
    expect(tries, 'the first attempt fails').toBe(2);
  });
});
test('top level', () => {});
`;

/** Jest: CommonJS, retries for the whole file (jest.retryTimes), so the failure runs twice. */
const JEST = `jest.retryTimes(1);
let tries = 0;
describe('group', () => {
  test('passes', () => {
    console.log('hello from passes');
    expect(1 + 1).toBe(2);
  });
  test('fails', () => {
    expect(1 + 1).toBe(3);
  });
  // The skip is the subject under test: runset must report a case that never runs as skipped.
  test.skip('skipped on purpose', () => {});
  test('passes on retry', () => {
    tries += 1;
    expect(tries).toBe(2);
  });
});
test('top level', () => {});
`;

/** Writes the suite into `dir`, its test file named after `tag` so names differ across suites. */
export function writeFrameworkSuite(dir: string, kind: FrameworkKind, tag: string, modules: string): string {
  mkdirSync(dir, { recursive: true });
  symlinkSync(modules, path.join(dir, 'node_modules'), 'dir');
  if (kind === 'mocha') return writeMochaSuite(dir, tag);
  if (kind === 'cucumber') return writeCucumberSuite(dir, tag);
  const file = `${tag}.test.js`;
  if (kind === 'vitest') {
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: tag, private: true, type: 'module' }));
    writeFileSync(path.join(dir, file), VITEST);
  } else {
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: tag, private: true }));
    writeFileSync(path.join(dir, file), JEST);
  }
  return file;
}

export interface DirectCase {
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  /** The first line of its last failure message. */
  firstLine: string | null;
}

/** Runs the suite with `cli` (the framework's own program) and its JSON report; its cases by `file › describe › title`. */
export async function runDirectly(kind: FrameworkKind, dir: string, cli: string): Promise<Map<string, DirectCase>> {
  if (kind === 'mocha') return runMochaDirectly(dir, cli);
  if (kind === 'cucumber') return runCucumberDirectly(dir, cli);
  const report = path.join(dir, 'direct-report.json');
  const args = kind === 'vitest' ? ['run', '--reporter=json', `--outputFile=${report}`] : ['--ci', '--json', `--outputFile=${report}`];
  await new Promise<void>((resolve) => execFile(process.execPath, [cli, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1' } }, () => resolve()));
  const json = JSON.parse(readFileSync(report, 'utf8')) as {
    testResults: Array<{ name: string; assertionResults: Array<{ ancestorTitles: string[]; title: string; status: string; failureMessages: string[] }> }>;
  };
  const out = new Map<string, DirectCase>();
  for (const file of json.testResults) {
    for (const a of file.assertionResults) {
      const name = [path.relative(dir, file.name), ...a.ancestorTitles, a.title].join(' › ');
      const status = a.status === 'passed' ? 'passed' : a.status === 'failed' ? 'failed' : 'skipped';
      const last = a.failureMessages.at(-1);
      out.set(name, { name, status, firstLine: status === 'failed' && last ? (last.split('\n').find((l) => l.trim() !== '') ?? '').trim() : null });
    }
  }
  return out;
}

/** The framework's program inside `modules`, from its package's `bin`. */
export function frameworkCli(kind: FrameworkKind, modules: string): string {
  const name = frameworkPackage(kind);
  const pkg = JSON.parse(readFileSync(path.join(modules, name, 'package.json'), 'utf8')) as { bin: string | Record<string, string> };
  return path.join(modules, name, typeof pkg.bin === 'string' ? pkg.bin : (pkg.bin[PACKAGES[kind]?.bin ?? kind] as string));
}
