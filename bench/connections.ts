/**
 * bench:connections — a burst of CI pollers against a real `runset serve`
 * (SQLite): autocannon opens 1,000 connections at once (BENCH_CONNECTIONS) to
 * the status GET of one set for BENCH_SECONDS (10).
 *
 * Two kinds of load:
 * - **closed loop**, at each backlog in turn (BENCH_BACKLOGS, default 511 —
 *   Node's default, what runset used before --backlog — and 4096, runset's
 *   default now): every connection sends its next request as soon as the last
 *   is answered, so the server is saturated from the first second;
 * - **paced pollers**, at runset's default backlog: every connection polls at
 *   BENCH_RATES requests a second (default 1 and 10: CI jobs polling every
 *   second, and ten times that), below what the server can answer.
 *
 * Printed per run: requests/s, latency p50/p99/max, timeouts (no answer within
 * autocannon's 10 s), errors and non-2xx, the kernel's listen-queue overflows,
 * and the listen socket's accept queue (connections the kernel has completed
 * but the server has not yet accepted), sampled every 250 ms with `ss`: its
 * peak and how long it took to empty. Budget: 0 timeouts for paced pollers.
 */
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { startRunset } from '../test/helpers/server.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BACKLOGS = (process.env.BENCH_BACKLOGS ?? '511,4096').split(',').map(Number);
const RATES = (process.env.BENCH_RATES ?? '1,10').split(',').map(Number);
const CONFIG = 'environments:\n  bench: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n';

/** The kernel's count of connections dropped because a listen queue was full (Linux; machine-wide). */
function listenOverflows(): number | undefined {
  try {
    const [names, values] = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:')).map((l) => l.split(/\s+/));
    const at = names?.indexOf('ListenOverflows') ?? -1;
    return at > 0 ? Number(values?.[at]) : undefined;
  } catch {
    return undefined;
  }
}

/** Connections waiting in the listen socket's accept queue on `port` (its Recv-Q in `ss -lnt`), or undefined without `ss`. */
function acceptQueue(port: number): number | undefined {
  try {
    const line = execFileSync('ss', ['-lntH', `sport = :${port}`], { encoding: 'utf8' }).trim().split('\n')[0];
    return line ? Number(line.trim().split(/\s+/)[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Samples the accept queue every 250 ms until stopped: its peak, and when it last held a connection. */
function watchAcceptQueue(port: number): () => { peak: number; emptyAfterMs: number } {
  const started = performance.now();
  let peak = 0;
  let lastBusy = 0;
  const timer = setInterval(() => {
    const queued = acceptQueue(port) ?? 0;
    peak = Math.max(peak, queued);
    if (queued > 0) lastBusy = performance.now() - started;
  }, 250);
  return () => {
    clearInterval(timer);
    return { peak, emptyAfterMs: Math.round(lastBusy) };
  };
}

async function run(label: string, backlog: number, connectionRate?: number): Promise<void> {
  const server = await startRunset({ config: CONFIG, args: ['--workers', '1', '--backlog', String(backlog)], env: { RUNSET_SETS_PER_MINUTE: '100000' } });
  try {
    const auth = { authorization: `Bearer ${server.apiKey}` };
    const created = (await (
      await fetch(`${server.url}/v0/test-run-sets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"env":"bench"}' })
    ).json()) as { testRunSetId: string };
    const overflowsBefore = listenOverflows();
    const stopWatching = watchAcceptQueue(Number(new URL(server.url).port));
    const r = await autocannon({
      url: `${server.url}/v0/test-run-sets/${created.testRunSetId}`,
      connections: CONNECTIONS,
      duration: SECONDS,
      headers: auth,
      ...(connectionRate ? { connectionRate } : {}),
    });
    const queue = stopWatching();
    console.log(
      `${label.padEnd(34)} ${Math.round(r.requests.average).toLocaleString('en')} req/s, ` +
        `latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, max ${r.latency.max} ms; ` +
        `timeouts ${r.timeouts}, errors ${r.errors}, non-2xx ${r.non2xx}; ` +
        `listen overflows ${(listenOverflows() ?? NaN) - (overflowsBefore ?? NaN)}; ` +
        `accept queue peak ${queue.peak}, empty after ${queue.emptyAfterMs} ms`,
    );
  } finally {
    await server.stop();
  }
}

console.log(`bench:connections — ${cpus().length} cores, ${cpus()[0]?.model ?? '?'}, node ${process.version} (libuv ${process.versions.uv})`);
console.log(`${CONNECTIONS} connections opened at once, ${SECONDS}s on the status GET; autocannon's request timeout 10s`);
for (const backlog of BACKLOGS) await run(`closed loop, backlog ${backlog}:`, backlog);
for (const rate of RATES) await run(`paced ${rate} req/s per connection:`, 4096, rate);
