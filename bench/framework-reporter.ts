/**
 * What runset's live reporter costs a framework run: a 200-case suite (4 files
 * of 50 quick cases; for Cucumber 4 features of 50 one-step scenarios) run by
 * each tested version of every framework with a live reporter, with its report
 * as a share writes it, then with runset's live reporting added as a share adds
 * it (its events appended to a file). For Vitest, Jest and Cucumber the first
 * run is the framework's own report alone (JSON; the message stream); for
 * Mocha, whose shares always report through runset's reporter, it is that
 * reporter without the live file, so the ratio is the live part's own cost.
 * Runs alternate, 5 of each; the medians and their ratio are printed. Budget:
 * live reporting keeps a share within 1.2 × the run without it.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { FRAMEWORK_ADAPTERS } from '../src/executors/frameworks/registry.js';
import { REPORTER_FILE_ENV } from '../src/executors/playwright/reporter.js';
import { FRAMEWORK_VERSIONS, frameworkModules } from '../test/helpers/framework-versions.js';
import { frameworkCli, frameworkPackage, type FrameworkKind } from '../test/e2e/framework-fixtures.js';
import { tempDir } from '../test/helpers/server.js';

const FILES = 4;
const PER_FILE = 50;
const ROUNDS = 5;
const MOCHA_REPORTER = fileURLToPath(new URL('../src/executors/frameworks/mocha-reporter.cjs', import.meta.url));

function writeSuite(dir: string, kind: FrameworkKind, modules: string): void {
  mkdirSync(path.join(dir, kind === 'cucumber' ? 'features/support' : ''), { recursive: true });
  symlinkSync(modules, path.join(dir, 'node_modules'), 'dir');
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ private: true, ...(kind === 'vitest' ? { type: 'module' } : {}) }));
  if (kind === 'cucumber') {
    writeFileSync(path.join(dir, 'features', 'support', 'steps.js'), "const { Given } = require('@cucumber/cucumber');\nGiven('the sum of {int} and one', (n) => { if (n + 1 <= n) throw new Error('no'); });\n");
  }
  for (let f = 0; f < FILES; f++) {
    if (kind === 'cucumber') {
      const scenarios = Array.from({ length: PER_FILE }, (_, i) => `  Scenario: case ${i}\n    Given the sum of ${i} and one\n`).join('\n');
      writeFileSync(path.join(dir, 'features', `f${f}.feature`), `Feature: file ${f}\n\n${scenarios}`);
      continue;
    }
    const it = kind === 'mocha' ? 'it' : 'test';
    const check = kind === 'mocha' ? (i: number) => `assert.equal(${i} + 1, ${i + 1})` : (i: number) => `expect(${i} + 1).toBe(${i + 1})`;
    const cases = Array.from({ length: PER_FILE }, (_, i) => `  ${it}('case ${i}', () => { ${check(i)}; });`).join('\n');
    const head = kind === 'vitest' ? "import { describe, test, expect } from 'vitest';\n" : kind === 'mocha' ? "const assert = require('node:assert');\n" : '';
    writeFileSync(path.join(dir, `f${f}.test.js`), `${head}describe('file ${f}', () => {\n${cases}\n});\n`);
  }
}

/** The run without live reporting, with its report as a share writes it, one framework worker. */
function directArgs(kind: FrameworkKind, report: string): string[] {
  if (kind === 'vitest') return ['run', '--reporter=json', `--outputFile=${report}`, '--maxWorkers=1'];
  if (kind === 'jest') return ['--ci', '--json', `--outputFile=${report}`, '--maxWorkers=1'];
  if (kind === 'mocha') return ['--reporter', MOCHA_REPORTER, '--reporter-option', `output=${report}`, ...Array.from({ length: FILES }, (_, f) => `f${f}.test.js`)];
  return ['--format', `message:${report}`];
}

async function timed(cli: string, args: string[], dir: string, env: NodeJS.ProcessEnv): Promise<number> {
  const start = performance.now();
  await promisify(execFile)(process.execPath, [cli, ...args], { cwd: dir, env }).catch(() => undefined);
  return performance.now() - start;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const root = tempDir('runset-bench-fw-reporter-');
console.log(`${FILES * PER_FILE} cases, median of ${ROUNDS} alternating runs each, one framework worker`);
/** Frameworks named on the command line (`vitest jest mocha cucumber`), or all of them. */
const only = process.argv.slice(2);
for (const [kind, versions] of Object.entries(FRAMEWORK_VERSIONS) as Array<[FrameworkKind, readonly string[]]>) {
  if (only.length > 0 && !only.includes(kind)) continue;
  const adapter = FRAMEWORK_ADAPTERS[kind];
  for (const version of versions) {
    const dir = path.join(root, `${kind}-${version}`);
    const report = path.join(dir, 'report.json');
    const reporting = adapter.liveReporter?.(version, { report, workers: 1 });
    if (!reporting) continue;
    const modules = await frameworkModules(frameworkPackage(kind), version);
    writeSuite(dir, kind, modules);
    const cli = frameworkCli(kind, modules);
    const direct = directArgs(kind, report);
    const live = [...direct, ...reporting.args];
    const events = path.join(dir, 'events.jsonl');
    const plain: number[] = [];
    const withReporter: number[] = [];
    await timed(cli, direct, dir, process.env); // warm the disk cache and any transform cache
    for (let round = 0; round < ROUNDS; round++) {
      plain.push(await timed(cli, direct, dir, process.env));
      writeFileSync(events, '');
      withReporter.push(await timed(cli, live, dir, { ...process.env, [REPORTER_FILE_ENV]: events }));
    }
    const [a, b] = [median(plain), median(withReporter)];
    const sent = readFileSync(events, 'utf8').split('\n').filter((line) => line !== '').length;
    console.log(`${kind} ${version}: without live reporting ${a.toFixed(0)} ms, with it ${b.toFixed(0)} ms, ratio ${(b / a).toFixed(3)} (${sent} events in a live run)`);
  }
}
rmSync(root, { recursive: true, force: true });
