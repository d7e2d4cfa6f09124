/**
 * bench:action — time from the GitHub Action's start to its create request.
 *
 * A local HTTP server stands for runset: it notes when `POST
 * /v0/test-run-sets` arrives, then answers 401 so the step ends at once (only
 * the start-up is measured, not a set). Each way is spawned BENCH_RUNS times
 * (default 15), interleaved:
 *
 * - before: what the composite action ran after its `npm ci`: `node
 *   dist/src/cli/main.js trigger --env … --wait` from a built checkout with its
 *   node_modules. The `npm ci` and TypeScript build that preceded it in every
 *   job (minutes) are NOT in this figure: it is the old way's floor;
 * - after: `node action/main.mjs` from a copy of action/ alone (no
 *   node_modules), with the inputs as the runner passes them (INPUT_*).
 *
 * Prints both medians, their ratio, and the budget: after < 2 s.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const KEY = 'bench-key-not-a-secret';

const actionDir = path.join(mkdtempSync(path.join(tmpdir(), 'runset-bench-action-')), 'action');
mkdirSync(actionDir);
for (const file of ['main.mjs', 'runset.mjs']) copyFileSync(path.join(ROOT, 'action', file), path.join(actionDir, file));

let arrived: (() => void) | null = null;
const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url?.startsWith('/api/v0/test-run-sets')) arrived?.();
  res.writeHead(401, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ type: 'about:blank', title: 'Unauthorized', status: 401, code: 'unauthorized', detail: 'bench' }));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;

const WAYS: ReadonlyArray<{ name: string; args: string[]; env: Record<string, string> }> = [
  { name: 'before: node dist/src/cli/main.js trigger (after npm ci, not counted)', args: [CLI, 'trigger', '--env', 'staging', '--wait'], env: { RUNSET_URL: url, RUNSET_API_KEY: KEY } },
  { name: 'after: node action/main.mjs (nothing installed)', args: [path.join(actionDir, 'main.mjs')], env: { 'INPUT_URL': url, 'INPUT_API-KEY': KEY, INPUT_ENV: 'staging', INPUT_INTERVAL: '10s', INPUT_TIMEOUT: '10m' } },
];

/** Milliseconds from spawn to the create request's arrival. */
function timeOnce(way: (typeof WAYS)[number]): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    let at: number | null = null;
    arrived = () => (at = Number(process.hrtime.bigint() - start) / 1e6);
    const child = spawn(process.execPath, way.args, { env: { PATH: process.env.PATH ?? '', ...way.env }, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', () => (at === null ? reject(new Error(`${way.name}: no create request arrived`)) : resolve(at)));
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const times = WAYS.map(() => [] as number[]);
for (const way of WAYS) await timeOnce(way); // warm the file cache
for (let run = 0; run < RUNS; run++) for (const [i, way] of WAYS.entries()) times[i]!.push(await timeOnce(way));
server.close();

console.log(`${RUNS} runs each, start → create request, medians (Node ${process.version})`);
for (const [i, way] of WAYS.entries()) console.log(`${way.name.padEnd(72)} ${median(times[i]!).toFixed(0).padStart(6)} ms`);
const before = median(times[0]!);
const after = median(times[1]!);
console.log(`after / before: ${(after / before).toFixed(2)}; after ${after.toFixed(0)} ms (budget < 2000 ms) — ${after < 2000 ? 'within budget' : 'OVER BUDGET'}`);
