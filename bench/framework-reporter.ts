/**
 * What runset's live reporter costs a framework run: a 200-case suite (4 files
 * of 50 quick cases) run by each tested Vitest and Jest version with its JSON
 * report, as a person would, then with runset's reporter added as a share runs
 * it (its events appended to a file). Runs alternate, 5 of each; the medians
 * and their ratio are printed. Budget: the reporter keeps a share within 1.2 ×
 * the framework run directly.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { jestAdapter } from '../src/executors/frameworks/jest.js';
import { vitestAdapter } from '../src/executors/frameworks/vitest.js';
import { REPORTER_FILE_ENV } from '../src/executors/playwright/reporter.js';
import { FRAMEWORK_VERSIONS, frameworkModules } from '../test/helpers/framework-versions.js';
import { frameworkCli } from '../test/e2e/framework-fixtures.js';
import { tempDir } from '../test/helpers/server.js';

const FILES = 4;
const PER_FILE = 50;
const ROUNDS = 5;

function writeSuite(dir: string, kind: 'vitest' | 'jest', modules: string): void {
  mkdirSync(dir, { recursive: true });
  symlinkSync(modules, path.join(dir, 'node_modules'), 'dir');
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ private: true, ...(kind === 'vitest' ? { type: 'module' } : {}) }));
  for (let f = 0; f < FILES; f++) {
    const cases = Array.from({ length: PER_FILE }, (_, i) => `  test('case ${i}', () => { expect(${i} + 1).toBe(${i + 1}); });`).join('\n');
    const head = kind === 'vitest' ? "import { describe, test, expect } from 'vitest';\n" : '';
    writeFileSync(path.join(dir, `f${f}.test.js`), `${head}describe('file ${f}', () => {\n${cases}\n});\n`);
  }
}

async function timed(cli: string, args: string[], dir: string, env: NodeJS.ProcessEnv): Promise<number> {
  const start = performance.now();
  await promisify(execFile)(process.execPath, [cli, ...args], { cwd: dir, env }).catch(() => undefined);
  return performance.now() - start;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const root = tempDir('runset-bench-fw-reporter-');
console.log(`${FILES * PER_FILE} cases, median of ${ROUNDS} alternating runs each, one framework worker`);
for (const [kind, versions] of Object.entries(FRAMEWORK_VERSIONS) as Array<['vitest' | 'jest', readonly string[]]>) {
  const adapter = kind === 'vitest' ? vitestAdapter : jestAdapter;
  for (const version of versions) {
    const modules = await frameworkModules(kind, version);
    const dir = path.join(root, `${kind}-${version}`);
    writeSuite(dir, kind, modules);
    const cli = frameworkCli(kind, modules);
    const report = path.join(dir, 'report.json');
    const direct = kind === 'vitest' ? ['run', '--reporter=json', `--outputFile=${report}`, '--maxWorkers=1'] : ['--ci', '--json', `--outputFile=${report}`, '--maxWorkers=1'];
    const live = [...direct, ...(adapter.liveReporter?.(version, { report, workers: 1 })?.args ?? [])];
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
    console.log(`${kind} ${version}: direct ${a.toFixed(0)} ms, with runset's reporter ${b.toFixed(0)} ms, ratio ${(b / a).toFixed(3)}`);
  }
}
rmSync(root, { recursive: true, force: true });
