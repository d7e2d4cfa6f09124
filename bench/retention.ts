/**
 * bench:retention — how long the retention sweep takes to remove a large
 * history of ended sets, and what it does to the status GET meanwhile, on each
 * store. A history of BENCH_SETS (100,000) ended sets of BENCH_MEMBERS (10)
 * members, ended over 100 days ago, is bulk-loaded (bench/history-loader.ts);
 * a server with `--retention 0` (no sweep) gives the baseline: the status GET's
 * p99 under autocannon, BENCH_CONNECTIONS (50) connections, in windows of
 * BENCH_SECONDS (5). The same server restarted with `--retention 90d` sweeps
 * the whole history while the same load runs, window after window, until its
 * log says the sweep is done. Target: the status GET's p99 never above 50 ms
 * during the sweep; printed beside the baseline, with their ratio.
 * BENCH_STORES (sqlite,postgres) picks the stores; PostgreSQL uses
 * RUNSET_BENCH_DATABASE_URL or RUNSET_TEST_DATABASE_URL, in a fresh schema dropped after.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import pg from 'pg';
import { api, startRunset, tempDir, waitForSet, type RunningServer } from '../test/helpers/server.js';
import { dropSchemas } from '../test/helpers/postgres.js';
import { SqliteStore } from '../src/store/sqlite/index.js';
import { PostgresStore } from '../src/store/postgres/index.js';
import type { Store } from '../src/store/store.js';
import { loadEndedSets, type HistoryTarget } from './history-loader.js';

const SETS = Number(process.env.BENCH_SETS ?? 100_000);
const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 10);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const BASELINE_WINDOWS = Number(process.env.BENCH_ROUNDS ?? 3);
const STORES = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',');
const PG_URL = process.env.RUNSET_BENCH_DATABASE_URL || process.env.RUNSET_TEST_DATABASE_URL || '';
const TARGET_P99_MS = 50;
const DAY_MS = 86_400_000;

interface Window {
  p99: number;
  rps: number;
  errors: number;
}

async function window(url: string, apiKey: string): Promise<Window> {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers: { authorization: `Bearer ${apiKey}` } });
  return { p99: r.latency.p99, rps: r.requests.average, errors: r.errors + r.timeouts + r.non2xx };
}

/** A fresh set's status address on the server, once the set has ended. */
async function statusUrl(server: RunningServer): Promise<string> {
  const created = await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env: 'bench' } });
  await waitForSet(server, created.body.testRunSetId);
  return `${server.url}/v0/test-run-sets/${created.body.testRunSetId}`;
}

/**
 * Watches, from a connection of its own, for the history to be gone: resolves
 * with the time it was. One indexed probe every 500 ms (the server's own log
 * would say so too, but at the info level it logs every request, which would
 * cost the load more than this does).
 */
async function swept(target: HistoryTarget, signal: AbortSignal): Promise<number> {
  const before = new Date(Date.now() - 90 * DAY_MS).toISOString();
  const probe = 'FROM test_run_sets WHERE ended_at < $1 LIMIT 1';
  let left: () => Promise<boolean>;
  let close: () => Promise<void>;
  if (target.kind === 'sqlite') {
    const db = new Database(target.file, { readonly: true });
    const stmt = db.prepare(`SELECT 1 ${probe.replace('$1', '?')}`);
    left = () => Promise.resolve(stmt.get(before) !== undefined);
    close = () => {
      db.close();
      return Promise.resolve();
    };
  } else {
    const client = new pg.Client({ connectionString: target.connectionString });
    await client.connect();
    left = async () => (await client.query(`SELECT 1 ${probe.replace('test_run_sets', `"${target.schema}".test_run_sets`)}`, [before])).rows.length > 0;
    close = () => client.end();
  }
  try {
    while (!signal.aborted) {
      if (!(await left())) return Date.now();
      await sleep(500);
    }
    throw new Error('stopped');
  } finally {
    await close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const line = (name: string, ws: Window[]) =>
  `${name}: ${ws.length} window(s), p99 median ${median(ws.map((w) => w.p99))} ms, worst ${Math.max(...ws.map((w) => w.p99))} ms; ${median(ws.map((w) => w.rps)).toFixed(0)} req/s median; errors ${ws.reduce((n, w) => n + w.errors, 0)}`;

async function benchStore(kind: 'sqlite' | 'postgres'): Promise<void> {
  const dir = tempDir('runset-bench-retention-');
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, 'environments:\n  bench: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n');
  const dataDir = path.join(dir, 'data');
  const schema = `runset_bench_${randomBytes(4).toString('hex')}`;
  const open = (): Store => (kind === 'sqlite' ? new SqliteStore(path.join(dataDir, 'runset.db')) : new PostgresStore({ connectionString: PG_URL, schema }));
  const target: HistoryTarget = kind === 'sqlite' ? { kind, file: path.join(dataDir, 'runset.db') } : { kind, connectionString: PG_URL, schema };
  const storeArgs = kind === 'sqlite' ? [] : ['--database-url', PG_URL, '--database-schema', schema];
  const serve = (retention: string) =>
    startRunset({ configPath, dataDir, args: ['--workers', '1', '--retention', retention, ...storeArgs], env: { RUNSET_SETS_PER_MINUTE: '100000' } });
  try {
    const store = open();
    await store.migrate();
    await store.close();
    const loadMs = await loadEndedSets(target, { sets: SETS, membersPerSet: MEMBERS, endedBefore: new Date(Date.now() - 100 * DAY_MS) });
    console.log(`\n[${kind}] loaded ${SETS.toLocaleString('en')} ended sets × ${MEMBERS} members in ${(loadMs / 1000).toFixed(1)} s`);

    const quiet = await serve('0');
    const baseline: Window[] = [];
    try {
      const url = await statusUrl(quiet);
      await window(url, quiet.apiKey); // warm-up
      for (let i = 0; i < BASELINE_WINDOWS; i++) baseline.push(await window(url, quiet.apiKey));
    } finally {
      await quiet.stop();
    }

    const sweeping = await serve('90d');
    const started = Date.now();
    const during: Window[] = [];
    const stop = new AbortController();
    let end: number | undefined;
    const done = swept(target, stop.signal).then((at) => (end = at));
    try {
      // The sweep starts a second after the server: the first window sees it from its start.
      const url = await statusUrl(sweeping);
      while (end === undefined) {
        const w = await window(url, sweeping.apiKey);
        during.push(w);
        // As it goes, so that a sweep cut short still leaves its figures.
        console.log(`  during the sweep, window ${during.length}: p99 ${w.p99} ms, ${w.rps.toFixed(0)} req/s`);
        if (Date.now() - started > 30 * 60_000) throw new Error('the sweep took over 30 minutes');
      }
      await done;
    } finally {
      stop.abort();
      await sweeping.stop();
    }
    const sweepS = (end - (started + 1000)) / 1000;
    console.log(line('status GET, no sweep (baseline)', baseline));
    console.log(line('status GET during the sweep', during));
    const worstDuring = Math.max(...during.map((w) => w.p99));
    const worstBase = Math.max(...baseline.map((w) => w.p99));
    console.log(`p99 during / baseline (worst windows): ${(worstDuring / Math.max(1, worstBase)).toFixed(2)}; target ≤ ${TARGET_P99_MS} ms: ${worstDuring <= TARGET_P99_MS ? 'OK' : 'OVER'}`);
    console.log(`sweep: ${SETS.toLocaleString('en')} sets (${(SETS * MEMBERS).toLocaleString('en')} members) in about ${sweepS.toFixed(1)} s under load (${(SETS / sweepS).toFixed(0)} sets/s)`);
  } finally {
    if (kind === 'postgres') await dropSchemas(PG_URL, [schema]);
  }
}

console.log(`bench:retention — ${cpus().length} cores, ${cpus()[0]?.model ?? '?'}, node ${process.version}; ${CONNECTIONS} connections, windows of ${SECONDS} s`);
for (const kind of STORES) {
  if (kind !== 'sqlite' && kind !== 'postgres') throw new Error(`BENCH_STORES: "${kind}" is not a store; use sqlite, postgres or both, comma separated`);
  if (kind === 'postgres' && !PG_URL) {
    console.log('\n[postgres] skipped: set RUNSET_BENCH_DATABASE_URL or RUNSET_TEST_DATABASE_URL');
    continue;
  }
  await benchStore(kind);
}
