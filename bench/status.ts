/**
 * bench:status — throughput and p99 of runset's status GET against a bare
 * Fastify route returning the same JSON, alternated in one run, 50 connections.
 * Budget (bench/README.md): ratio ≥ 0.6, runset p99 < 10 ms, zero errors.
 *
 * BENCH_METRICS=ab adds, in the same rounds, a second runset serving
 * Prometheus metrics (--metrics-port): what metrics cost the status GET, as
 * the median of the rounds' own on/off ratios, on a machine too busy for two
 * separate runs to compare.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { cpus } from 'node:os';
import autocannon from 'autocannon';
import { CLI, tempDir } from '../test/helpers/server.js';
import { newToken } from '../src/auth/keys.js';
import { cpuMs } from './proc-cpu.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 50;
const METRICS_AB = process.env.BENCH_METRICS === 'ab';

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

/** One load run; `pid`: the server's, whose CPU per request (µs) is measured too. */
async function load(url: string, headers: Record<string, string>, pid?: number) {
  const cpu0 = cpuMs(pid);
  const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  const cpuUs = ((cpuMs(pid) - cpu0) * 1000) / Math.max(1, r.requests.total);
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx, cpuUs };
}

const dir = tempDir('runset-bench-');
const config = path.join(dir, 'runset.config.yaml');
writeFileSync(config, 'environments:\n  bench: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n');
const key = newToken();
const auth = { authorization: `Bearer ${key}` };

/** A runset serve with one ended set: the process and the set's status URL. */
async function startRunset(name: string, extra: string[]): Promise<{ proc: ChildProcess; statusUrl: string }> {
  const { proc, url } = await startChild(
    [CLI, 'serve', '--port', '0', '--config', config, '--data-dir', path.join(dir, name), '--workers', '1', ...extra],
    { ...process.env, RUNSET_BOOTSTRAP_KEY: key, RUNSET_LOG_LEVEL: 'warn', RUNSET_SETS_PER_MINUTE: '100000' },
    /API at (http:\/\/\S+\/api)/,
  );
  const created = (await (await fetch(`${url}/v0/test-run-sets`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ env: 'bench' }),
  })).json()) as { testRunSetId: string };
  await new Promise((r) => setTimeout(r, 500));
  return { proc, statusUrl: `${url}/v0/test-run-sets/${created.testRunSetId}` };
}

const runset = await startRunset('data', []);
const statusUrl = runset.statusUrl;
const metered = METRICS_AB ? await startRunset('data-metrics', ['--metrics-port', '0']) : undefined;
const sample = await (await fetch(statusUrl, { headers: auth })).text();
const bare = await startChild([new URL('./bare-server.js', import.meta.url).pathname, sample], process.env, /READY (\S+)/);

console.log(`bench:status — ${cpus().length} cores, ${cpus()[0]?.model ?? '?'}, node ${process.version}`);
console.log(`${ROUNDS} alternated rounds of ${SECONDS}s, ${CONNECTIONS} connections; body ${sample.length} bytes`);
type Result = Awaited<ReturnType<typeof load>>;
const targets = [
  { name: 'bare', url: bare.url, headers: {}, pid: bare.proc.pid },
  { name: 'runset', url: statusUrl, headers: auth, pid: runset.proc.pid },
  ...(metered ? [{ name: 'metrics', url: metered.statusUrl, headers: auth, pid: metered.proc.pid }] : []),
];
const results: Record<string, Result[]> = Object.fromEntries(targets.map((t) => [t.name, []]));
try {
  for (const t of targets) await load(t.url, t.headers); // warm-up
  // CPU per request: on a machine shared with other work, throughput swings with
  // the neighbours; the server's own CPU per request much less.
  // Each round measures every target, the order rotating from round to round
  // (bare first, then runset first, ...), so that a machine slowing down or
  // speeding up mid-run (a shared virtual machine does) weighs on all alike.
  for (let i = 0; i < ROUNDS; i++) {
    for (const t of [...targets.slice(i % targets.length), ...targets.slice(0, i % targets.length)]) results[t.name]!.push(await load(t.url, t.headers, t.pid));
    const [b, r, m] = [results.bare![i]!, results.runset![i]!, results.metrics?.[i]];
    const cpu = (x: Result) => `${x.cpuUs.toFixed(0)} µs cpu/req`;
    const withMetrics = m ? ` | with metrics ${m.rps.toFixed(0)} req/s p99 ${m.p99} ms ${cpu(m)}, on/off ${(m.rps / r.rps).toFixed(2)}` : '';
    console.log(`round ${i + 1}: bare ${b.rps.toFixed(0)} req/s p99 ${b.p99} ms ${cpu(b)} | runset ${r.rps.toFixed(0)} req/s p99 ${r.p99} ms ${cpu(r)} | ratio ${(r.rps / b.rps).toFixed(2)}${withMetrics}`);
  }
} finally {
  runset.proc.kill('SIGTERM');
  metered?.proc.kill('SIGTERM');
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
const [bareRuns, runsetRuns] = [results.bare!, results.runset!];
const ratio = median(runsetRuns.map((r, i) => r.rps / bareRuns[i]!.rps));
const ofMeans = mean(runsetRuns.map((r) => r.rps)) / mean(bareRuns.map((r) => r.rps));
const p99 = Math.max(...runsetRuns.map((r) => r.p99));
const errors = runsetRuns.reduce((a, r) => a + r.errors, 0);
console.log(`runset/bare throughput ratio, median of rounds: ${ratio.toFixed(2)} (budget ≥ 0.60) ${ratio >= 0.6 ? 'OK' : 'OVER BUDGET'}; ratio of means ${ofMeans.toFixed(2)}`);
console.log(`runset p99 (worst round): ${p99} ms (budget < 10 ms) ${p99 < 10 ? 'OK' : 'OVER BUDGET'}`);
console.log(`runset errors/non-2xx: ${errors} ${errors === 0 ? 'OK' : 'FAIL'}`);
if (results.metrics) {
  const m = results.metrics;
  const onOff = median(m.map((r, i) => r.rps / runsetRuns[i]!.rps));
  const onBare = median(m.map((r, i) => r.rps / bareRuns[i]!.rps));
  const cpuOnOff = median(m.map((r, i) => r.cpuUs / runsetRuns[i]!.cpuUs));
  console.log(`with metrics on: runset/bare ${onBare.toFixed(2)} (median of rounds); metrics on/off ${onOff.toFixed(2)} in throughput, ${cpuOnOff.toFixed(2)} in CPU per request (medians of rounds); p99 (worst round) ${Math.max(...m.map((r) => r.p99))} ms; errors ${m.reduce((a, r) => a + r.errors, 0)}`);
}
