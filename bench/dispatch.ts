/**
 * bench:dispatch — how fast runset starts and gets through `command` runs.
 *
 * 1. Dispatch: create-to-first-RUNNING latency of single-member sets, each
 *    created while a worker slot is free (the previous set has ended). Measured
 *    by the server (member startedAt − set createdAt) and as the client sees it
 *    (POST sent → first status GET that is no longer WAITING, polled in a tight
 *    loop). Budget (bench/README.md): median ≤ 50 ms.
 * 2. Overhead: wall time of one set of 1,000 `true` members (set createdAt →
 *    endedAt) against, in the same run and at the same concurrency, a bare
 *    Node loop spawning the same commands (stdio piped, as any runner that
 *    keeps output must) and `seq 1000 | xargs -P<workers> -n1 true`.
 *    Budget: runset ≤ 1.3 × the bare Node loop; the xargs ratio is reported.
 *
 * Stores: SQLite (`runset serve`, API and workers in one process) always;
 * PostgreSQL (`serve --no-workers` + `runset worker`, wake-ups by LISTEN/NOTIFY)
 * when RUNSET_BENCH_DATABASE_URL or RUNSET_TEST_DATABASE_URL is set, on a schema
 * of its own that is dropped at the end.
 *
 * CPU time per member (user + sys of runset's own processes and its command
 * launcher, from /proc; of this process for the bare loop; never the commands'
 * own) is printed beside the wall times: on a small or busy machine it tells
 * overhead from waiting. On PostgreSQL, the CPU of the backends serving runset's
 * pooled connections is printed too when the server runs on this machine.
 *
 * Knobs: BENCH_WORKERS (default: cores), BENCH_SETS (50), BENCH_MEMBERS (1000),
 * BENCH_ROUNDS (7). Rounds alternate their order; the verdict is the median of
 * the rounds' own runset / bare-loop ratios.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { newToken } from '../src/auth/keys.js';
import { CLI, tempDir } from '../test/helpers/server.js';
import { cpuMs } from './proc-cpu.js';

const WORKERS = Number(process.env.BENCH_WORKERS ?? availableParallelism());
const SETS = Number(process.env.BENCH_SETS ?? 50);
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const PG_URL = process.env.RUNSET_BENCH_DATABASE_URL || process.env.RUNSET_TEST_DATABASE_URL || undefined;

interface Target {
  name: string;
  url: string;
  key: string;
  procs: ChildProcess[];
  /** CPU so far (ms) of each database backend serving runset, by pid; undefined when the server is not on this machine. */
  dbBackends?(): Promise<Map<number, number> | undefined>;
  close(): Promise<void>;
}

interface Status {
  status: string;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
}

// ── processes ──

function startChild(args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<{ proc: ChildProcess; match: string }> {
  const proc = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) resolve({ proc, match: m[1]! });
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`runset ${args[0]} exited ${code}:\n${out}`)));
  });
}

function stopChild(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
}

function childEnv(key: string): NodeJS.ProcessEnv {
  return { ...process.env, RUNSET_BOOTSTRAP_KEY: key, RUNSET_LOG_LEVEL: 'warn', RUNSET_SETS_PER_MINUTE: '1000000' };
}

async function sqliteTarget(config: string, dir: string): Promise<Target> {
  const key = newToken();
  const api = await startChild(
    ['serve', '--port', '0', '--config', config, '--data-dir', path.join(dir, 'data'), '--workers', String(WORKERS)],
    childEnv(key),
    /API at (http:\/\/\S+\/api)/,
  );
  return { name: 'sqlite', url: api.match, key, procs: [api.proc], close: () => stopChild(api.proc) };
}

async function postgresTarget(config: string, url: string): Promise<Target> {
  const key = newToken();
  const schema = `runset_bench_${randomBytes(5).toString('hex')}`;
  const db = ['--database-url', url, '--database-schema', schema, '--config', config];
  const api = await startChild(['serve', '--no-workers', '--port', '0', ...db], childEnv(key), /API at (http:\/\/\S+\/api)/);
  const worker = await startChild(['worker', '--workers', String(WORKERS), ...db], childEnv(key), /worker (\S+) with/);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  return {
    name: 'postgres',
    url: api.match,
    key,
    procs: [api.proc, worker.proc],
    async dbBackends() {
      // The stores' pooled connections (application_name runset:<schema>), not the LISTEN ones, which idle.
      const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [`runset:${schema}`]);
      // A remote server's pids mean nothing here (or name some other local process).
      const local = rows.filter((r) => isPostgresBackend(r.pid));
      return local.length === 0 ? undefined : new Map(local.map((r) => [r.pid, cpuMs(r.pid)]));
    },
    async close() {
      await stopChild(worker.proc);
      await stopChild(api.proc);
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => admin.end());
    },
  };
}

// ── talking to runset ──

async function call<T>(t: Target, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(t.url + route, {
    method,
    headers: { authorization: `Bearer ${t.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status !== 200) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const create = async (t: Target, env: string) => (await call<{ testRunSetId: string }>(t, 'POST', '/v0/test-run-sets', { env })).testRunSetId;
const status = (t: Target, id: string) => call<Status>(t, 'GET', `/v0/test-run-sets/${id}`);
const ended = (s: Status) => s.status === 'SUCCESS' || s.status === 'FAIL';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A stuck set fails the bench instead of hanging it. */
const SET_DEADLINE_MS = 5 * 60_000;

function checkDeadline(startedAt: number, id: string): void {
  if (performance.now() - startedAt > SET_DEADLINE_MS) throw new Error(`set ${id} did not end within ${SET_DEADLINE_MS / 1000}s`);
}

async function waitEnded(t: Target, id: string, everyMs: number): Promise<Status> {
  const startedAt = performance.now();
  for (;;) {
    checkDeadline(startedAt, id);
    const s = await status(t, id);
    if (ended(s)) {
      if (s.status !== 'SUCCESS') throw new Error(`set ${id} ended ${s.status}`);
      return s;
    }
    await sleep(everyMs);
  }
}

/** One single-member set: server-side (startedAt − createdAt) and client-observed latency, ms. */
async function dispatchOnce(t: Target): Promise<{ server: number; client: number }> {
  const t0 = performance.now();
  const id = await create(t, 'one');
  let s = await status(t, id);
  while (s.status === 'WAITING') {
    checkDeadline(t0, id);
    s = await status(t, id);
  }
  const client = performance.now() - t0;
  s = ended(s) ? s : await waitEnded(t, id, 2);
  const runs = await call<{ testRuns: Array<{ startedAt: string }> }>(t, 'GET', `/v0/test-run-sets/${id}/test-runs`);
  return { server: Date.parse(runs.testRuns[0]!.startedAt) - Date.parse(s.createdAt), client };
}

async function dispatch(t: Target): Promise<{ server: number[]; client: number[] }> {
  for (let i = 0; i < 5; i++) await dispatchOnce(t); // warm-up
  const out = { server: [] as number[], client: [] as number[] };
  for (let i = 0; i < SETS; i++) {
    await sleep(20); // every slot idle, the worker back to waiting for a wake-up
    const d = await dispatchOnce(t);
    out.server.push(d.server);
    out.client.push(d.client);
  }
  return out;
}

/** Whether this machine's process `pid` is a PostgreSQL backend ("postgres: …" in its command line). */
function isPostgresBackend(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('postgres');
  } catch {
    return false;
  }
}

/** A process and its descendants (runset's command launcher, the commands): pids from /proc. */
function withDescendants(roots: Array<number | undefined>): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out = roots.filter((p): p is number => p !== undefined);
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of parent) if (ppid === out[i]) out.push(pid);
  return out;
}

interface Measure {
  wall: number;
  cpu: number;
  /** CPU of the database backends serving runset meanwhile, ms (PostgreSQL on this machine). */
  dbCpu?: number;
}

/**
 * One set of MEMBERS `true` runs: wall by the server's clock (createdAt → endedAt,
 * so polling granularity does not count; polled gently, since each poll costs the
 * server CPU) and CPU used by runset's processes meanwhile, ms.
 */
async function bigSet(t: Target): Promise<Measure> {
  // runset's processes and their long-lived helpers (the command launcher), not the commands themselves.
  const pids = withDescendants(t.procs.map((p) => p.pid));
  const cpu0 = pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
  const db0 = await t.dbBackends?.();
  const id = await create(t, 'many');
  const s = await waitEnded(t, id, 100);
  const cpu = pids.reduce((sum, pid) => sum + cpuMs(pid), 0) - cpu0;
  const db1 = await t.dbBackends?.();
  // A backend that started meanwhile counts whole; one that ended meanwhile is lost (pools keep theirs).
  const dbCpu = db0 && db1 ? [...db1].reduce((sum, [pid, used]) => sum + used - (db0.get(pid) ?? 0), 0) : undefined;
  return { wall: Date.parse(s.endedAt!) - Date.parse(s.createdAt), cpu, ...(dbCpu === undefined ? {} : { dbCpu }) };
}

// ── baselines ──

function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('true', [], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`true exited ${code}`))));
  });
}

async function bareNodeLoop(): Promise<Measure> {
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (next < MEMBERS) {
        next++;
        await spawnTrue();
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { wall: performance.now() - t0, cpu: (cpu.user + cpu.system) / 1000 };
}

function xargs(): number {
  const t0 = performance.now();
  const res = spawnSync('sh', ['-c', `seq ${MEMBERS} | xargs -P${WORKERS} -n1 true`], { stdio: 'ignore' });
  if (res.status !== 0) throw new Error(`xargs exited ${res.status}`);
  return performance.now() - t0;
}

// ── figures ──

function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}
const median = (xs: number[]) => quantile(xs, 0.5);
const ms = (x: number) => `${x.toFixed(1)} ms`;
const verdict = (ok: boolean) => (ok ? 'OK' : 'OVER BUDGET');
const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;

const dir = tempDir('runset-bench-dispatch-');
const config = path.join(dir, 'runset.config.yaml');
const many = Array.from({ length: MEMBERS }, (_, i) => `  - { name: t${String(i).padStart(4, '0')}, type: command, run: ["true"], environments: [many] }`);
writeFileSync(
  config,
  `environments:\n  one: { variables: {} }\n  many: { variables: {} }\ntests:\n  - { name: dispatch, type: command, run: ["true"], environments: [one] }\n${many.join('\n')}\n`,
);

console.log(`bench:dispatch — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`);
console.log(`${WORKERS} worker slot(s); dispatch over ${SETS} single-member sets; ${MEMBERS} members, ${ROUNDS} alternated round(s), medians`);
if (!PG_URL) console.log('PostgreSQL: skipped (set RUNSET_BENCH_DATABASE_URL or RUNSET_TEST_DATABASE_URL)');

const targets: Target[] = [];
let failed = false;
try {
  targets.push(await sqliteTarget(config, dir));
  if (PG_URL) targets.push(await postgresTarget(config, PG_URL));

  for (const t of targets) {
    const d = await dispatch(t);
    const m = median(d.server);
    console.log(
      `dispatch ${t.name}: median ${ms(m)}, p95 ${ms(quantile(d.server, 0.95))}, max ${ms(Math.max(...d.server))} (startedAt − createdAt); ` +
        `client-observed median ${ms(median(d.client))}, p95 ${ms(quantile(d.client, 0.95))} — budget median ≤ 50 ms ${verdict(m <= 50)}`,
    );
    failed ||= m > 50;
  }

  // Each round measures everything once, in alternating order (baselines first,
  // then runset; then the reverse), so that a machine getting slower or faster
  // during the run weighs on both sides alike.
  const runs: Record<string, Measure[]> = { node: [], xargs: [] };
  for (const t of targets) runs[t.name] = [];
  const show = (m: Measure) =>
    m.cpu > 0 ? `${ms(m.wall)} (cpu ${ms(m.cpu)}${m.dbCpu === undefined ? '' : `, database ${ms(m.dbCpu)}`})` : ms(m.wall);
  const measures: Array<[string, () => Promise<Measure>]> = [
    ['node', bareNodeLoop],
    ['xargs', () => Promise.resolve({ wall: xargs(), cpu: 0 })],
    ...targets.map((t): [string, () => Promise<Measure>] => [t.name, () => bigSet(t)]),
  ];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, measure] of round % 2 === 0 ? measures : [...measures].reverse()) runs[name]!.push(await measure());
    console.log(`round ${round + 1}: ${Object.entries(runs).map(([k, v]) => `${k} ${show(v[round]!)}`).join(' | ')}`);
  }
  const wall = (name: string) => median(runs[name]!.map((m) => m.wall));
  const cpuPerMember = (name: string) => median(runs[name]!.map((m) => m.cpu)) / MEMBERS;
  const dbCpuPerMember = (name: string) => {
    const used = runs[name]!.flatMap((m) => (m.dbCpu === undefined ? [] : [m.dbCpu]));
    return used.length === 0 ? '' : ` (+ ${(median(used) / MEMBERS).toFixed(2)} ms in PostgreSQL's backends)`;
  };
  const node = wall('node');
  const xa = wall('xargs');
  console.log(
    `${MEMBERS} × true at ${WORKERS}: bare Node loop ${ms(node)} (cpu ${cpuPerMember('node').toFixed(2)} ms/member), ` +
      `xargs -P${WORKERS} ${ms(xa)} (Node/xargs ${(node / xa).toFixed(2)}×)`,
  );
  // The verdict: the median of the rounds' own ratios, each comparing runs made
  // minutes apart at most; the ratio of the medians is printed beside it.
  for (const t of targets) {
    const perRound = runs[t.name]!.map((m, i) => m.wall / runs.node![i]!.wall);
    const ratio = median(perRound);
    const w = wall(t.name);
    console.log(
      `${MEMBERS} × true on runset ${t.name}: ${ms(w)}; ${ratio.toFixed(2)}× the bare Node loop, median of rounds ` +
        `(${perRound.map((r) => r.toFixed(2)).join(', ')}; ratio of medians ${(w / node).toFixed(2)}) (budget ≤ 1.30×) ${verdict(ratio <= 1.3)}, ` +
        `${(w / xa).toFixed(2)}× xargs; ${signed((w - node) / MEMBERS)} ms wall and ${cpuPerMember(t.name).toFixed(2)} ms cpu${dbCpuPerMember(t.name)} per member`,
    );
    failed ||= ratio > 1.3;
  }
} finally {
  for (const t of targets.reverse()) await t.close();
  rmSync(dir, { recursive: true, force: true });
}
if (failed) process.exitCode = 1;
