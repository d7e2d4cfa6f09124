/**
 * bench:budgets — the hot paths' budgets in one run of a few minutes, one table.
 *
 * Runs, one after another and each in its short form, the benches that guard
 * what every pipeline pays for: the status GET (bench:status, against a bare
 * Fastify route), the claim loop (bench:dispatch: dispatch latency and 300
 * `true` members against a bare Node loop, on SQLite and, when
 * RUNSET_BENCH_DATABASE_URL or RUNSET_TEST_DATABASE_URL is set, PostgreSQL),
 * and the CI client seeing a set's end (bench:wait with 20 sets: waiting reads
 * against polling, then the SDK, the CLI and the Action on sets whose status
 * changes between reads). Each bench still prints its own lines (kept in the
 * output above the table); this script reads their figures and verdicts, and
 * adds the CPU per operation, which is steadier than wall time on a shared
 * machine.
 *
 * Exits 1 when a figure is over its budget or a bench failed to report it. The
 * budgets are the benches' own (bench/README.md); none is asserted in npm test.
 * BUDGET_ROUNDS (3) sets the rounds of the alternated benches.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROUNDS = process.env.BUDGET_ROUNDS ?? '3';

interface Row {
  figure: string;
  value: string;
  budget: string;
  ok: boolean;
  cpu: string;
}

/** Runs one bench (its lines echoed as they were printed) and returns its output. */
function run(script: string, env: Record<string, string>): string {
  const began = Date.now();
  const res = spawnSync(process.execPath, [path.join(HERE, script)], { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const out = `${res.stdout ?? ''}${res.stderr ?? ''}`;
  process.stdout.write(`\n── ${script} (${((Date.now() - began) / 1000).toFixed(0)} s, exit ${res.status ?? res.signal})\n${out}`);
  return out;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : (sorted[sorted.length >> 1] as number);
}

/** A row for a figure the bench did not print: the budget cannot be judged, so it fails. */
function missing(figure: string, budget: string): Row {
  return { figure, value: 'not reported', budget, ok: false, cpu: '' };
}

function statusRows(out: string): Row[] {
  const cpu = (who: 'bare' | 'runset') => median([...out.matchAll(new RegExp(`${who} \\d+ req/s p99 \\d+ ms (\\d+) µs cpu/req`, 'g'))].map((m) => Number(m[1])));
  const ratio = /throughput ratio, median of rounds: ([\d.]+) \(budget ≥ ([\d.]+)\) (OK|OVER BUDGET)/.exec(out);
  const p99 = /runset p99 \(worst round\): (\d+) ms \(budget < (\d+) ms\) (OK|OVER BUDGET)/.exec(out);
  return [
    ratio
      ? { figure: 'status GET / bare Fastify, throughput', value: ratio[1]!, budget: `≥ ${ratio[2]}`, ok: ratio[3] === 'OK', cpu: `${cpu('runset')} µs/req (bare ${cpu('bare')})` }
      : missing('status GET / bare Fastify, throughput', '≥ 0.60'),
    p99 ? { figure: 'status GET p99, worst round', value: `${p99[1]} ms`, budget: `< ${p99[2]} ms`, ok: p99[3] === 'OK', cpu: '' } : missing('status GET p99, worst round', '< 10 ms'),
  ];
}

function dispatchRows(out: string): Row[] {
  const latency = [...out.matchAll(/^dispatch (\S+): median ([\d.]+) ms.*budget median ≤ 50 ms (OK|OVER BUDGET)/gm)].map(
    (m): Row => ({ figure: `dispatch latency, ${m[1]}`, value: `${m[2]} ms`, budget: '≤ 50 ms', ok: m[3] === 'OK', cpu: '' }),
  );
  const loop = [...out.matchAll(/× true on runset (\S+): .*?; ([\d.]+)× the bare Node loop, .*\(budget ≤ 1\.30×\) (OK|OVER BUDGET), .*? ([\d.]+) ms cpu(?: \(\+ ([\d.]+) ms in PostgreSQL's backends\))? per member/gm)].map(
    (m): Row => ({ figure: `claim loop / bare Node loop, ${m[1]}`, value: `${m[2]}×`, budget: '≤ 1.30×', ok: m[3] === 'OK', cpu: `${m[4]} ms/member${m[5] ? ` + ${m[5]} ms in PostgreSQL` : ''}` }),
  );
  return [...(latency.length > 0 ? latency : [missing('dispatch latency', '≤ 50 ms')]), ...(loop.length > 0 ? loop : [missing('claim loop / bare Node loop', '≤ 1.30×')])];
}

function waitRows(out: string): Row[] {
  const reads = [...out.matchAll(/^(\S+)\s+waiting reads make ([\d.]+) × the requests of polling; median delay (\d+) ms \(budget < 100 ms\): (within budget|OVER BUDGET)/gm)].map(
    (m): Row => ({ figure: `end seen by a waiting read (${m[1]})`, value: `median ${m[3]} ms`, budget: '< 100 ms', ok: m[4] === 'within budget', cpu: `${m[2]}× polling's requests` }),
  );
  const clients = [...out.matchAll(/^(\S+)\s+(.+?)\s+6 members ending 0\.5 s apart, \d+ sets: end → client saw it median (\d+) ms, max (\d+) ms .*: (within budget|OVER BUDGET)/gm)].map(
    (m): Row => ({ figure: `end seen by the client, ${m[2]!.trim()} (${m[1]})`, value: `median ${m[3]} ms, max ${m[4]} ms`, budget: '< 100 ms, < 1 s', ok: m[5] === 'within budget', cpu: '' }),
  );
  return [...(reads.length > 0 ? reads : [missing('end seen by a waiting read', '< 100 ms')]), ...(clients.length > 0 ? clients : [missing('end seen by the client', '< 100 ms, < 1 s')])];
}

const began = Date.now();
const rows = [
  ...statusRows(run('status.js', { BENCH_ROUNDS: ROUNDS, BENCH_SECONDS: '3' })),
  ...dispatchRows(run('dispatch.js', { BENCH_ROUNDS: ROUNDS, BENCH_MEMBERS: '300', BENCH_SETS: '20' })),
  ...waitRows(run('wait.js', { BENCH_SETS: '20', BENCH_CLIENT_SETS: '4' })),
];

const header: Row = { figure: 'figure', value: 'measured', budget: 'budget', ok: true, cpu: 'CPU per operation' };
const widths = (['figure', 'value', 'budget'] as const).map((k) => Math.max(...[header, ...rows].map((r) => r[k].length)));
const line = (r: Row, verdict: string) => `${r.figure.padEnd(widths[0]!)}  ${r.value.padEnd(widths[1]!)}  ${r.budget.padEnd(widths[2]!)}  ${verdict.padEnd(11)}  ${r.cpu}`;
console.log(`\nbench:budgets — ${new Date().toISOString()}, ${((Date.now() - began) / 60_000).toFixed(1)} min, ${ROUNDS} round(s)`);
console.log(line(header, 'verdict'));
for (const r of rows) console.log(line(r, r.ok ? 'ok' : 'OVER BUDGET'));
const over = rows.filter((r) => !r.ok).length;
console.log(over === 0 ? 'every hot path within its budget' : `${over} figure(s) over budget or not reported`);
process.exitCode = over === 0 ? 0 : 1;
