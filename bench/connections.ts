/**
 * bench:connections — a burst of CI pollers: autocannon opens 1,000
 * connections at once (BENCH_CONNECTIONS) to the status GET of one set and
 * keeps them busy for BENCH_SECONDS (10), against a real `runset serve`
 * (SQLite) listening with each backlog in turn: 511 (Node's default, what
 * runset used before --backlog) and 4096 (runset's default now). Printed per
 * backlog: requests/s, latency p50/p99/max, timeouts, errors and non-2xx.
 * Budget: 0 timeouts at runset's default on an idle machine.
 */
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { startRunset } from '../test/helpers/server.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BACKLOGS = (process.env.BENCH_BACKLOGS ?? '511,4096').split(',').map(Number);
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

console.log(`bench:connections — ${cpus().length} cores, ${cpus()[0]?.model ?? '?'}, node ${process.version}`);
console.log(`${CONNECTIONS} connections opened at once, ${SECONDS}s on the status GET; autocannon's request timeout 10s`);
for (const backlog of BACKLOGS) {
  const server = await startRunset({ config: CONFIG, args: ['--workers', '1', '--backlog', String(backlog)], env: { RUNSET_SETS_PER_MINUTE: '100000' } });
  try {
    const auth = { authorization: `Bearer ${server.apiKey}` };
    const created = (await (
      await fetch(`${server.url}/v0/test-run-sets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"env":"bench"}' })
    ).json()) as { testRunSetId: string };
    const overflowsBefore = listenOverflows();
    const r = await autocannon({ url: `${server.url}/v0/test-run-sets/${created.testRunSetId}`, connections: CONNECTIONS, duration: SECONDS, headers: auth });
    console.log(
      `backlog ${String(backlog).padStart(5)}: ${Math.round(r.requests.average).toLocaleString('en')} req/s, ` +
        `latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, max ${r.latency.max} ms; ` +
        `timeouts ${r.timeouts}, errors ${r.errors}, non-2xx ${r.non2xx}; ` +
        `kernel listen overflows ${(listenOverflows() ?? NaN) - (overflowsBefore ?? NaN)}`,
    );
  } finally {
    await server.stop();
  }
}
