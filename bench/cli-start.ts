/**
 * bench:cli — how long the CI client takes to start: `runset trigger --help`,
 * `runset --help` and `runset trigger` without RUNSET_URL (a usage error, as a
 * broken CI step meets it) against a bare `node -e 0`, each spawned
 * BENCH_RUNS times (default 30), interleaved so a machine that slows down
 * mid-run weighs on all alike. Prints each median and its ratio to bare Node.
 * Budget: `trigger --help` within 3 × bare Node.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const ENV = { ...process.env, RUNSET_URL: '', RUNSET_API_KEY: '' };

const CASES: ReadonlyArray<{ name: string; args: string[] }> = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'runset trigger --help', args: [CLI, 'trigger', '--help'] },
  { name: 'runset --help', args: [CLI, '--help'] },
  { name: 'runset trigger (no RUNSET_URL)', args: [CLI, 'trigger', '--env', 'staging'] },
];

function timeOnce(args: string[]): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { env: ENV, stdio: 'ignore' });
  if (result.error) throw result.error;
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const times = CASES.map(() => [] as number[]);
for (const c of CASES) timeOnce(c.args); // warm the file cache
for (let run = 0; run < RUNS; run++) CASES.forEach((c, i) => times[i]!.push(timeOnce(c.args)));

const bare = median(times[0]!);
console.log(`${RUNS} runs each, medians (Node ${process.version})`);
for (const [i, c] of CASES.entries()) {
  const m = median(times[i]!);
  console.log(`${c.name.padEnd(32)} ${m.toFixed(1).padStart(7)} ms   ×${(m / bare).toFixed(2)} bare node`);
}
const ratio = median(times[1]!) / bare;
console.log(`trigger --help / bare node: ${ratio.toFixed(2)} (budget ≤ 3) — ${ratio <= 3 ? 'within budget' : 'OVER BUDGET'}`);
