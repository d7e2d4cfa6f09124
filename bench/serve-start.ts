/**
 * bench:start — the CPU one server start costs, spawn to its start line
 * ("API at …" or "worker … with"), then SIGTERM: `serve`, `serve
 * --no-workers` and, with RUNSET_TEST_DATABASE_URL, `worker` on PostgreSQL.
 * The e2e suite starts hundreds of these, so their CPU is much of `npm test`'s
 * (bench/README.md, "runset's start"). Each BENCH_RUNS times (default 9),
 * interleaved; prints each case's median CPU and wall time. CPU, not wall
 * time, is the figure to compare on a shared machine.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CLI } from '../test/helpers/server.js';
import { cpuMs } from './proc-cpu.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const DATABASE_URL = process.env.RUNSET_TEST_DATABASE_URL;
const CONFIG = 'environments:\n  staging: {}\ntests:\n  - name: t\n    type: command\n    run: [node, -e, "0"]\n';

const CASES: ReadonlyArray<{ name: string; args: string[] }> = [
  { name: 'serve', args: ['serve', '--port', '0'] },
  { name: 'serve --no-workers', args: ['serve', '--port', '0', '--no-workers'] },
  ...(DATABASE_URL ? [{ name: 'worker (PostgreSQL, 2 slots)', args: ['worker', '--workers', '2', '--database-url', DATABASE_URL, '--database-schema', 'bench_start'] }] : []),
];

/** One start: [CPU ms, wall ms] until the start line. */
async function startOnce(args: string[]): Promise<[number, number]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-bench-start-'));
  writeFileSync(path.join(dir, 'runset.config.yaml'), CONFIG);
  const began = performance.now();
  const proc = spawn(process.execPath, [CLI, ...args, '--config', path.join(dir, 'runset.config.yaml'), '--data-dir', path.join(dir, 'data')], {
    env: { ...process.env, RUNSET_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  try {
    await new Promise<void>((resolve, reject) => {
      let err = '';
      proc.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (/API at |worker \S+ with /.test(err)) resolve();
      });
      proc.on('exit', (code) => reject(new Error(`runset ${args[0]} exited ${code}: ${err}`)));
    });
    return [cpuMs(proc.pid), performance.now() - began];
  } finally {
    proc.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const results = CASES.map(() => [] as Array<[number, number]>);
for (const c of CASES) await startOnce(c.args); // warm the file cache (and migrate the PostgreSQL schema)
for (let run = 0; run < RUNS; run++) for (const [i, c] of CASES.entries()) results[i]!.push(await startOnce(c.args));

console.log(`${RUNS} starts each, medians (Node ${process.version})${DATABASE_URL ? '' : '; set RUNSET_TEST_DATABASE_URL for the worker case'}`);
for (const [i, c] of CASES.entries()) {
  const cpu = median(results[i]!.map(([ms]) => ms));
  const wall = median(results[i]!.map(([, ms]) => ms));
  console.log(`${c.name.padEnd(30)} ${(cpu / 1000).toFixed(2)} CPU-s   ${wall.toFixed(0).padStart(6)} ms wall`);
}
