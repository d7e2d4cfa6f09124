/**
 * bench:frameworks — for each framework adapter in the registry
 * (src/executors/frameworks/registry.ts), a suite of BENCH_CASES (200) cases run
 * directly with the framework's own CLI, and through runset: one `runset serve`
 * with one worker slot, one set, from the create to the poll that sees it end.
 * Rounds alternate the two on the same machine; the medians and their ratio are
 * printed. Budget (bench/README.md): runset ≤ 1.2 × the framework alone.
 *
 * Table-driven: a framework joins by adding its fixture generator to SUITES
 * (the suite's files and the direct command); an adapter without one is named
 * and skipped. Both sides run one framework worker (`--maxWorkers=1`, what
 * runset gives a share of one slot), so the ratio is runset's own cost. Each
 * framework is installed from npm into node_modules/.cache/runset-frameworks
 * (test/helpers/framework-versions.ts), its newest tested version.
 *
 * runset's time also covers its claim, the share's report reading and the 200
 * members' moves; the listing runs when `serve` loads the config, before the
 * round, and is printed apart (serve start).
 *
 * BENCH_CASES (200), BENCH_ROUNDS (3), BENCH_FRAMEWORKS (every adapter, comma separated).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { tempDir } from '../test/helpers/server.js';
import { FRAMEWORK_VERSIONS, frameworkModules } from '../test/helpers/framework-versions.js';
import { frameworkCli } from '../test/e2e/framework-fixtures.js';
import { newToken } from '../src/auth/keys.js';
import { FRAMEWORK_ADAPTERS } from '../src/executors/frameworks/registry.js';
import { runsetRound, startServe } from './runset-serve.js';

const CASES = Number(process.env.BENCH_CASES ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PER_FILE = 10;
const BUDGET = 1.2;

/** A framework's fixture: its package, the suite's files for `cases` cases, and how its own CLI runs it. */
interface SuiteFixture {
  pkg: string;
  version: string;
  write(dir: string, cases: number): void;
  directArgs: string[];
}

/** Each case awaits a timer and checks a little arithmetic: real framework work, no I/O beyond the files. */
function body(i: number): string {
  return `await new Promise((r) => setTimeout(r, 2)); expect(${i} * 2).toBe(${i * 2});`;
}

function files(cases: number): Array<{ name: string; tests: number[] }> {
  const out: Array<{ name: string; tests: number[] }> = [];
  for (let start = 0; start < cases; start += PER_FILE) {
    out.push({ name: `f${String(out.length).padStart(3, '0')}.test.js`, tests: Array.from({ length: Math.min(PER_FILE, cases - start) }, (_, k) => start + k) });
  }
  return out;
}

const newest = (versions: readonly string[]) => versions[versions.length - 1]!;

const SUITES: Record<string, SuiteFixture> = {
  vitest: {
    pkg: 'vitest',
    version: newest(FRAMEWORK_VERSIONS.vitest),
    write(dir, cases) {
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'bench-vitest', private: true, type: 'module' }));
      for (const f of files(cases)) {
        const tests = f.tests.map((i) => `  test('case ${i}', async () => { ${body(i)} });`).join('\n');
        writeFileSync(path.join(dir, f.name), `import { describe, test, expect } from 'vitest';\ndescribe('${f.name}', () => {\n${tests}\n});\n`);
      }
    },
    directArgs: ['run', '--maxWorkers=1'],
  },
  jest: {
    pkg: 'jest',
    version: newest(FRAMEWORK_VERSIONS.jest),
    write(dir, cases) {
      writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'bench-jest', private: true }));
      for (const f of files(cases)) {
        const tests = f.tests.map((i) => `  test('case ${i}', async () => { ${body(i)} });`).join('\n');
        writeFileSync(path.join(dir, f.name), `describe('${f.name}', () => {\n${tests}\n});\n`);
      }
    },
    directArgs: ['--ci', '--maxWorkers=1'],
  },
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Runs the framework's own CLI in `dir`; ms from spawn to exit (it must pass). */
function direct(cli: string, args: string[], dir: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', CI: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`${path.basename(cli)} exited ${code}: ${err.slice(-2000)}`))));
  });
}

async function benchOne(type: string, fixture: SuiteFixture): Promise<void> {
  const modules = await frameworkModules(fixture.pkg, fixture.version);
  const root = tempDir(`runset-bench-${type}-`);
  const dir = path.join(root, 'suite');
  mkdirSync(dir, { recursive: true });
  symlinkSync(modules, path.join(dir, 'node_modules'), 'dir');
  fixture.write(dir, CASES);
  const cli = frameworkCli(fixture.pkg as 'vitest' | 'jest', modules);
  const config = path.join(root, 'runset.config.yaml');
  writeFileSync(config, `environments:\n  bench: {}\ntests:\n  - { name: suite, type: ${type}, dir: suite, workers: 1 }\n`);
  const key = newToken();
  const serveStarted = performance.now();
  const { proc, url } = await startServe(config, path.join(root, 'data'), key, 1);
  const serveMs = performance.now() - serveStarted;
  const directMs: number[] = [];
  const runsetMs: number[] = [];
  try {
    await direct(cli, fixture.directArgs, dir); // warm-up: the first import of a framework fills the OS cache
    await runsetRound(url, key);
    for (let round = 0; round < ROUNDS; round++) {
      directMs.push(await direct(cli, fixture.directArgs, dir));
      runsetMs.push(await runsetRound(url, key));
    }
  } finally {
    proc.kill('SIGTERM');
  }
  const d = median(directMs);
  const r = median(runsetMs);
  const ratio = r / d;
  console.log(
    `${type} ${fixture.version}: ${CASES} cases — directly ${(d / 1000).toFixed(2)} s, through runset ${(r / 1000).toFixed(2)} s, ` +
      `ratio ${ratio.toFixed(2)} × (budget ≤ ${BUDGET} ×: ${ratio <= BUDGET ? 'within' : 'OVER'}); serve start with its listing ${(serveMs / 1000).toFixed(2)} s`,
  );
  console.log(`  rounds directly: ${directMs.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s; through runset: ${runsetMs.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s`);
}

async function main(): Promise<void> {
  const wanted = process.env.BENCH_FRAMEWORKS?.split(',').map((s) => s.trim()) ?? Object.keys(FRAMEWORK_ADAPTERS);
  console.log(`bench:frameworks — ${CASES} cases, ${ROUNDS} rounds (medians), load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at the start`);
  for (const type of wanted) {
    const fixture = SUITES[type];
    if (!fixture) {
      console.log(`${type}: no fixture generator in bench/frameworks.ts (SUITES): skipped`);
      continue;
    }
    await benchOne(type, fixture);
  }
  console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at the end`);
}

await main();
