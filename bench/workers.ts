/**
 * bench:workers — many workers over HTTP against one API on PostgreSQL
 * (issue 26): the database's connections, and how fast members start and go
 * through, against direct PostgreSQL workers in the same run.
 *
 * - HTTP: `runset serve --no-workers` on PostgreSQL and BENCH_HTTP_WORKERS (40)
 *   `runset worker --url --workers BENCH_HTTP_SLOTS (1)` processes. Connections are read from
 *   pg_stat_activity (runset names them `runset:<schema>` and
 *   `runset-listen:<schema>`), sampled all along: the most seen must stay within
 *   the API's own pool (10 + its LISTEN connection).
 * - Direct (the baseline): the same API with as many `runset worker
 *   --database-url` processes of as many slots (BENCH_DIRECT_WORKERS to change
 *   it), each with --pool-size BENCH_DIRECT_POOL (1): 40 direct processes at
 *   their default pool would need 120 connections and more, past PostgreSQL's
 *   default max_connections (100), which is what the issue is about.
 * - BENCH_PROFILE_DIR=DIR: V8 CPU profiles of the API and of one HTTP worker.
 *
 * Each side measures, like bench:dispatch: claim-to-start latency (BENCH_SETS
 * single-member sets created one after another while slots are free; the
 * member's startedAt − the set's createdAt, the store's clock), and the wall
 * time of one set of BENCH_MEMBERS `true` members (createdAt → endedAt). The
 * verdict: HTTP / direct for both, budget 1.3 ×; and the CPU each part (API,
 * workers, PostgreSQL's processes) used during the big set, which is what
 * bounds it on a machine of few cores.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { newToken } from '../src/auth/keys.js';
import { CLI, tempDir } from '../test/helpers/server.js';
import { cpuMs } from './proc-cpu.js';

const HTTP_WORKERS = Number(process.env.BENCH_HTTP_WORKERS ?? 40);
const HTTP_SLOTS = Number(process.env.BENCH_HTTP_SLOTS ?? 1);
/** The baseline has the HTTP side's shape: as many processes, as many slots each. */
const DIRECT_WORKERS = Number(process.env.BENCH_DIRECT_WORKERS ?? HTTP_WORKERS);
/** Each direct worker's pool (--pool-size, default slots + 1): 40 direct workers fit in PostgreSQL's default max_connections (100) only with 1 (and a LISTEN connection each). */
const DIRECT_POOL = ['--pool-size', process.env.BENCH_DIRECT_POOL ?? '1'];
/** Direct workers hold as many slots in all as the HTTP ones. */
const DIRECT_SLOTS = Math.ceil((HTTP_WORKERS * HTTP_SLOTS) / DIRECT_WORKERS);
const SETS = Number(process.env.BENCH_SETS ?? 30);
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 400);
const PG_URL = process.env.RUNSET_BENCH_DATABASE_URL || process.env.RUNSET_TEST_DATABASE_URL;
if (!PG_URL) throw new Error('bench:workers needs PostgreSQL: set RUNSET_BENCH_DATABASE_URL or RUNSET_TEST_DATABASE_URL');

const schema = `runset_bench_workers_${process.pid}`;
const dir = tempDir('runset-bench-workers-');
const config = path.join(dir, 'runset.config.yaml');
writeFileSync(config, `environments:\n  one: { variables: {} }\n  many: { variables: {} }\ntests:\n  - { name: once, type: command, run: ["true"], environments: [one] }\n${Array.from({ length: MEMBERS }, (_, i) => `  - { name: t${i}, type: command, run: ["true"], environments: [many] }`).join('\n')}\n`);
const adminKey = newToken();
const procs = new Set<ChildProcess>();
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNSET_')));

/** The API process and the first HTTP worker write V8 CPU profiles there (open them in Chrome's DevTools). */
const PROFILE = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROFILE_DIR] : [];

function start(args: string[], env: Record<string, string>, ready: RegExp, nodeArgs: string[] = []): Promise<{ proc: ChildProcess; match: RegExpExecArray }> {
  const proc = spawn(process.execPath, [...nodeArgs, CLI, ...args], { env: { ...baseEnv, RUNSET_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  procs.add(proc);
  proc.on('exit', () => procs.delete(proc));
  let log = '';
  return new Promise((resolve, reject) => {
    proc.stderr.on('data', (d: Buffer) => {
      log += d.toString();
      const match = ready.exec(log);
      if (match) resolve({ proc, match });
    });
    proc.on('exit', (code) => reject(new Error(`${args[0]} exited with ${code}:\n${log}`)));
  });
}

async function stop(list: ChildProcess[]): Promise<void> {
  await Promise.all(list.map((p) => new Promise((resolve) => (p.exitCode !== null ? resolve(null) : (p.once('exit', resolve), p.kill('SIGTERM'))))));
}

async function call<T>(url: string, key: string, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(url + route, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

interface Status { status: string; createdAt: string; startedAt: string | null; endedAt: string | null }

async function runSet(url: string, env: string): Promise<Status> {
  const { testRunSetId } = await call<{ testRunSetId: string }>(url, adminKey, 'POST', '/v0/test-run-sets', { env });
  for (;;) {
    const s = await call<Status>(url, adminKey, 'GET', `/v0/test-run-sets/${testRunSetId}`);
    if (s.status === 'SUCCESS' || s.status === 'FAIL') return s;
    await new Promise((resolve) => setTimeout(resolve, env === 'one' ? 2 : 50));
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** runset's connections to this schema, now. */
async function connections(db: pg.Client): Promise<number> {
  const { rows } = await db.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name IN ($1, $2)", [`runset:${schema}`, `runset-listen:${schema}`]);
  return Number(rows[0]?.n ?? 0);
}

/** PostgreSQL's server processes on this machine (the bench's database is local): their CPU is the database's. */
function postgresPids(): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
    } catch {
      return false;
    }
  });
}

/** CPU used by each part (API, workers, PostgreSQL) while `work` runs, ms. */
async function cpuDuring<T>(parts: Record<string, () => number[]>, work: () => Promise<T>): Promise<{ result: T; cpu: Record<string, number> }> {
  const sum = (pids: number[]) => pids.reduce((a, pid) => a + cpuMs(pid), 0);
  const pids = Object.fromEntries(Object.entries(parts).map(([k, f]) => [k, f()]));
  const before = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, sum(p)]));
  const result = await work();
  return { result, cpu: Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, sum(p) - before[k]!])) };
}

async function measure(url: string, name: string, db: pg.Client, parts: Record<string, () => number[]>): Promise<{ dispatchMs: number; wallMs: number; peak: number }> {
  let peak = 0;
  const sampler = setInterval(() => void connections(db).then((n) => (peak = Math.max(peak, n))), 100);
  const latencies: number[] = [];
  for (let i = 0; i < SETS; i++) {
    const s = await runSet(url, 'one');
    latencies.push(Date.parse(s.startedAt!) - Date.parse(s.createdAt));
  }
  const { result: big, cpu } = await cpuDuring(parts, () => runSet(url, 'many'));
  clearInterval(sampler);
  peak = Math.max(peak, await connections(db));
  const result = { dispatchMs: median(latencies), wallMs: Date.parse(big.endedAt!) - Date.parse(big.createdAt), peak };
  console.log(`${name}: claim-to-start median ${result.dispatchMs} ms (p90 ${[...latencies].sort((a, b) => a - b)[Math.floor(latencies.length * 0.9)]} ms) over ${SETS} sets; ${MEMBERS} × true in ${result.wallMs} ms (${big.status}); runset's PostgreSQL connections at most ${peak}; CPU during the ${MEMBERS}: ${Object.entries(cpu).map(([k, v]) => `${k} ${Math.round(v)} ms`).join(', ')}`);
  return result;
}

async function main(): Promise<void> {
  const db = new pg.Client({ connectionString: PG_URL });
  await db.connect();
  const dbArgs = ['--database-url', PG_URL!, '--database-schema', schema];
  try {
    const api = await start(['serve', '--no-workers', '--port', '0', '--config', config, '--data-dir', path.join(dir, 'data'), '--poll', '1s', ...dbArgs], { RUNSET_BOOTSTRAP_KEY: adminKey }, /API at (http:\/\/\S+\/api)/, PROFILE);
    const url = api.match[1]!;
    const { token: workerKey } = await call<{ token: string }>(url, adminKey, 'POST', '/v0/keys', { name: 'bench workers', role: 'worker' });
    const apiOnly = await connections(db);
    console.log(`bench:workers: ${HTTP_WORKERS} HTTP workers × ${HTTP_SLOTS} slot(s) vs ${DIRECT_WORKERS} direct workers × ${DIRECT_SLOTS} slots; ${SETS} single-member sets, one set of ${MEMBERS} × true; the API alone holds ${apiOnly} PostgreSQL connection(s)`);

    const direct = (await Promise.all(Array.from({ length: DIRECT_WORKERS }, () =>
      start(['worker', '--workers', String(DIRECT_SLOTS), '--config', config, '--data-dir', path.join(dir, 'data'), ...DIRECT_POOL, ...dbArgs], {}, /runset: worker \S+ with/)))).map((s) => s.proc);
    await runSet(url, 'one'); // warm
    const base = await measure(url, `direct (${DIRECT_WORKERS} processes)`, db, { API: () => [api.proc.pid!], workers: () => direct.map((p) => p.pid!), PostgreSQL: postgresPids });
    await stop(direct);

    const started = Date.now();
    const http = (await Promise.all(Array.from({ length: HTTP_WORKERS }, (_, i) =>
      start(['worker', '--url', url, '--workers', String(HTTP_SLOTS)], { RUNSET_API_KEY: workerKey }, /runset: worker \S+ with/, i === 0 ? PROFILE : [])))).map((s) => s.proc);
    console.log(`${HTTP_WORKERS} HTTP workers started in ${Date.now() - started} ms`);
    await runSet(url, 'one'); // warm
    const over = await measure(url, `HTTP (${HTTP_WORKERS} processes)`, db, { API: () => [api.proc.pid!], workers: () => http.map((p) => p.pid!), PostgreSQL: postgresPids });
    await stop(http);
    await stop([api.proc]);

    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
    console.log(`verdict: HTTP / direct claim-to-start ${ratio(over.dispatchMs, base.dispatchMs)} × (${over.dispatchMs} vs ${base.dispatchMs} ms), ${MEMBERS} × true ${ratio(over.wallMs, base.wallMs)} × (budget 1.3 ×); PostgreSQL connections with ${HTTP_WORKERS} HTTP workers at most ${over.peak} (the API's pool: 10 + 1 LISTEN), direct ${base.peak}`);
  } finally {
    for (const p of procs) p.kill('SIGKILL');
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await db.end();
  }
}

await main();
