/**
 * bench:frameworks — for each framework adapter in the registry
 * (src/executors/frameworks/registry.ts), a suite of BENCH_CASES (200) cases run
 * directly with the framework's own CLI, and through runset: one `runset serve`
 * with one worker slot, one set, from the create to the poll that sees it end.
 * Rounds alternate the two on the same machine; the medians and their ratio are
 * printed. Budget (bench/README.md): runset ≤ 1.2 × the framework alone.
 *
 * Table-driven: a framework joins by adding its row to SUITES
 * (./framework-suites.ts: the suite's files, the entry, the direct command); an
 * adapter without one is named and skipped. Both sides run one framework
 * worker (what runset gives a share of one slot), so the ratio is runset's own
 * cost. Each npm framework is installed into node_modules/.cache/runset-frameworks
 * (test/helpers/framework-versions.ts), its newest tested version; pytest is
 * Debian's; Newman's requests call a local server answering 200.
 *
 * runset's time also covers its claim, the share's report reading and the 200
 * members' moves; the listing runs when `serve` loads the config, before the
 * round, and is printed apart (serve start).
 *
 * BENCH_CASES (200), BENCH_ROUNDS (3), BENCH_FRAMEWORKS (every adapter, comma separated).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import path from 'node:path';
import { tempDir } from '../test/helpers/server.js';
import { frameworkModules } from '../test/helpers/framework-versions.js';
import { SUITES, type SuiteFixture } from './framework-suites.js';
import { newToken } from '../src/auth/keys.js';
import { FRAMEWORK_ADAPTERS } from '../src/executors/frameworks/registry.js';
import { runsetRound, startServe } from './runset-serve.js';

const CASES = Number(process.env.BENCH_CASES ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BUDGET = 1.2;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Runs the framework's own command in `dir`; ms from spawn to exit (it must pass). */
function direct(command: { command: string; args: string[] }, dir: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command.command, command.args, { cwd: dir, env: { ...process.env, NO_COLOR: '1', CI: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`${path.basename(command.args[0] ?? command.command)} exited ${code}: ${err.slice(-2000)}`))));
  });
}

/** A server answering 200 on every path: what Newman's requests call. */
async function startTarget(): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function benchOne(type: string, fixture: SuiteFixture, baseUrl: string): Promise<void> {
  const modules = fixture.pkg ? await frameworkModules(fixture.pkg, fixture.version) : '';
  const root = tempDir(`runset-bench-${type}-`);
  const dir = path.join(root, 'suite');
  mkdirSync(dir, { recursive: true });
  if (modules) symlinkSync(modules, path.join(dir, 'node_modules'), 'dir');
  fixture.write(dir, CASES);
  const command = fixture.direct({ modules, baseUrl });
  const config = path.join(root, 'runset.config.yaml');
  const entry = [`name: suite`, `type: ${type}`, `dir: suite`, ...(fixture.entry ? [fixture.entry] : [])].join(', ');
  writeFileSync(config, `environments:\n  bench: { variables: { BASE_URL: "${baseUrl}" } }\ntests:\n  - { ${entry} }\n`);
  const key = newToken();
  const serveStarted = performance.now();
  const { proc, url } = await startServe(config, path.join(root, 'data'), key, 1);
  const serveMs = performance.now() - serveStarted;
  const directMs: number[] = [];
  const runsetMs: number[] = [];
  try {
    await direct(command, dir); // warm-up: the first import of a framework fills the OS cache
    await runsetRound(url, key);
    for (let round = 0; round < ROUNDS; round++) {
      directMs.push(await direct(command, dir));
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
  const target = await startTarget();
  for (const type of wanted) {
    const fixture = SUITES[type];
    if (!fixture) {
      console.log(`${type}: no fixture generator in bench/frameworks.ts (SUITES): skipped`);
      continue;
    }
    await benchOne(type, fixture, target.url);
  }
  target.server.close();
  console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at the end`);
}

await main();
