/**
 * bench:status — throughput and p99 of runset's status GET against a bare
 * Fastify route returning the same JSON, alternated in one run, 50 connections.
 * Budget (DESIGN.md): ratio ≥ 0.6, runset p99 < 10 ms, zero errors.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { cpus } from 'node:os';
import autocannon from 'autocannon';
import { CLI, tempDir } from '../test/helpers/server.js';
import { newToken } from '../src/auth/keys.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 50;

function startChild(args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) resolve({ proc, url: m[1]! });
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

async function load(url: string, headers: Record<string, string>) {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx };
}

const dir = tempDir('runset-bench-');
const config = path.join(dir, 'runset.config.yaml');
writeFileSync(config, 'environments:\n  bench: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n');
const key = newToken();
const runset = await startChild(
  [CLI, 'serve', '--port', '0', '--config', config, '--data-dir', path.join(dir, 'data'), '--workers', '1'],
  { ...process.env, RUNSET_BOOTSTRAP_KEY: key, RUNSET_LOG_LEVEL: 'warn', RUNSET_SETS_PER_MINUTE: '100000' },
  /API at (http:\/\/\S+\/api)/,
);
const auth = { authorization: `Bearer ${key}` };
const created = (await (await fetch(`${runset.url}/v0/test-run-sets`, {
  method: 'POST',
  headers: { ...auth, 'content-type': 'application/json' },
  body: JSON.stringify({ env: 'bench' }),
})).json()) as { testRunSetId: string };
await new Promise((r) => setTimeout(r, 500));
const statusUrl = `${runset.url}/v0/test-run-sets/${created.testRunSetId}`;
const sample = await (await fetch(statusUrl, { headers: auth })).text();
const bare = await startChild([new URL('./bare-server.js', import.meta.url).pathname, sample], process.env, /READY (\S+)/);

console.log(`bench:status — ${cpus().length} cores, ${cpus()[0]?.model ?? '?'}, node ${process.version}`);
console.log(`${ROUNDS} alternated rounds of ${SECONDS}s, ${CONNECTIONS} connections; body ${sample.length} bytes`);
const results = { runset: [] as Awaited<ReturnType<typeof load>>[], bare: [] as Awaited<ReturnType<typeof load>>[] };
try {
  await load(bare.url, {}); // warm-up both
  await load(statusUrl, auth);
  // Each round measures both, in alternating order (bare first, then runset
  // first, ...), so that a machine slowing down or speeding up mid-run (a shared
  // virtual machine does) weighs on both sides alike.
  for (let i = 0; i < ROUNDS; i++) {
    if (i % 2 === 0) {
      results.bare.push(await load(bare.url, {}));
      results.runset.push(await load(statusUrl, auth));
    } else {
      results.runset.push(await load(statusUrl, auth));
      results.bare.push(await load(bare.url, {}));
    }
    const [b, r] = [results.bare[i]!, results.runset[i]!];
    console.log(`round ${i + 1}: bare ${b.rps.toFixed(0)} req/s p99 ${b.p99} ms | runset ${r.rps.toFixed(0)} req/s p99 ${r.p99} ms | ratio ${(r.rps / b.rps).toFixed(2)}`);
  }
} finally {
  runset.proc.kill('SIGTERM');
  bare.proc.kill('SIGTERM');
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
// The verdict takes the median of the rounds' own ratios: each compares two runs
// seconds apart, and one disturbed round cannot swing it. The ratio of the means
// is printed beside it.
const ratio = median(results.runset.map((r, i) => r.rps / results.bare[i]!.rps));
const ofMeans = mean(results.runset.map((r) => r.rps)) / mean(results.bare.map((r) => r.rps));
const p99 = Math.max(...results.runset.map((r) => r.p99));
const errors = results.runset.reduce((a, r) => a + r.errors, 0);
console.log(`runset/bare throughput ratio, median of rounds: ${ratio.toFixed(2)} (budget ≥ 0.60) ${ratio >= 0.6 ? 'OK' : 'OVER BUDGET'}; ratio of means ${ofMeans.toFixed(2)}`);
console.log(`runset p99 (worst round): ${p99} ms (budget < 10 ms) ${p99 < 10 ? 'OK' : 'OVER BUDGET'}`);
console.log(`runset errors/non-2xx: ${errors} ${errors === 0 ? 'OK' : 'FAIL'}`);
