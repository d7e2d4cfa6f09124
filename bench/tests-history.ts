/**
 * bench:history — GET /api/v0/tests and /api/v0/tests/history over real HTTP
 * (a `runset serve --no-workers` process) at BENCH_MEMBERS ended members
 * (default 1,000,000) against a baseline of 10,000, on SQLite and (with
 * RUNSET_TEST_DATABASE_URL) PostgreSQL. Per scenario: p50 and p99 of
 * BENCH_REQUESTS sequential requests (one client, keep-alive) after a warm-up.
 * Target: p99 under 100 ms at a million. Also prints the query plans of the
 * store's own statements on the big store: which index serves which read.
 */
import path from 'node:path';
import { cpus } from 'node:os';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startRunset, tempDir } from '../test/helpers/server.js';
import { dropSchemas, newSchemaName } from '../test/helpers/postgres.js';
import { SqliteStore } from '../src/store/sqlite/index.js';
import { PostgresStore } from '../src/store/postgres/index.js';
import { HISTORY_SQL } from '../src/store/sqlite/history.js';
import { historySql, testsPageSql } from '../src/store/postgres/history.js';
import { namesOf } from '../src/store/postgres/statements.js';
import { HISTORY_WINDOW } from '../src/history/flakiness.js';
import { decodeNameCursor, decodeRunCursor } from '../src/store/history.js';
import { expected, loadPostgres, loadSqlite } from './history-data.js';

const MEMBERS = Number(process.env.BENCH_MEMBERS ?? 1_000_000);
const BASELINE = 10_000;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const WARMUP = 20;
const TARGET_P99_MS = 100;
const DATABASE_URL = process.env.RUNSET_TEST_DATABASE_URL;

type Kind = 'sqlite' | 'postgres';
interface Figures { p50: number; p99: number; bytes: number }

function scenarios(members: number): Array<[string, string]> {
  const e = expected(members);
  const name = encodeURIComponent(e.name);
  return [
    ['tests: first page (20 tests × 50 runs)', '/v0/tests?env=staging'],
    ['tests: filtered (name=checkout)', '/v0/tests?env=staging&name=checkout'],
    ['tests: deep cursor (after 80 % of names)', `/v0/tests?env=staging&cursor=${e.testsCursor}`],
    ['history: first page (50 runs)', `/v0/tests/history?env=staging&name=${name}`],
    ['history: small environment (preview)', `/v0/tests/history?env=preview&name=${name}`],
    [`history: deep cursor (after 80 % of ${e.runsPerTest} runs)`, `/v0/tests/history?env=staging&name=${name}&cursor=${e.historyCursor}`],
  ];
}

/** The environments the data uses; the tests themselves are not what is read. */
const CONFIG = 'environments:\n  staging: { variables: {} }\n  preview: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n';

async function measure(url: string, key: string): Promise<Figures> {
  const once = async () => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${body}`);
    return body.length;
  };
  for (let i = 0; i < WARMUP; i++) await once();
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const start = performance.now();
    bytes = await once();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length, Math.ceil(p * times.length)) - 1]!;
  return { p50: at(0.5), p99: at(0.99), bytes };
}

/** A migrated, loaded store, the serve flags that open it, its plans, and its teardown. */
async function prepare(kind: Kind, members: number) {
  const dir = tempDir('runset-bench-history-');
  const started = performance.now();
  if (kind === 'sqlite') {
    const file = path.join(dir, 'data', 'runset.db');
    const store = new SqliteStore(file);
    await store.migrate();
    await store.close();
    loadSqlite(file, members);
    return { dataDir: path.join(dir, 'data'), args: [], loadMs: performance.now() - started, plans: () => Promise.resolve(sqlitePlans(file, members)), drop: () => Promise.resolve() };
  }
  const schema = newSchemaName('runset_bench');
  const store = new PostgresStore({ connectionString: DATABASE_URL!, schema });
  await store.migrate();
  await store.close();
  await loadPostgres(DATABASE_URL!, schema, members);
  return {
    dataDir: path.join(dir, 'data'),
    args: ['--database-url', DATABASE_URL!, '--database-schema', schema],
    loadMs: performance.now() - started,
    plans: () => postgresPlans(schema, members),
    drop: () => dropSchemas(DATABASE_URL!, [schema]),
  };
}

function sqlitePlans(file: string, members: number): string[] {
  const db = new Database(file, { readonly: true });
  const e = expected(members);
  const at = decodeRunCursor(e.historyCursor);
  const params: Record<keyof typeof HISTORY_SQL, Record<string, unknown>> = {
    firstName: { env: 'staging' },
    nextName: { env: 'staging', after: decodeNameCursor(e.testsCursor) },
    window: { env: 'staging', name: e.name, limit: HISTORY_WINDOW },
    newest: { env: 'staging', name: e.name, limit: 51 },
    older: { env: 'staging', name: e.name, limit: 51, ended_at: at.endedAt, id: at.id },
    caseFirstName: { env: 'staging' },
    caseNextName: { env: 'staging', after: decodeNameCursor(e.testsCursor) },
    caseWindow: { env: 'staging', name: e.name, limit: HISTORY_WINDOW },
    caseNewest: { env: 'staging', name: e.name, limit: 51 },
    caseOlder: { env: 'staging', name: e.name, limit: 51, ended_at: at.endedAt, id: at.id },
  };
  try {
    return Object.entries(HISTORY_SQL).map(([op, sql]) => {
      const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params[op as keyof typeof HISTORY_SQL]) as Array<{ detail: string }>;
      return `${op}: ${rows.map((r) => r.detail).join(' / ')}`;
    });
  } finally {
    db.close();
  }
}

async function postgresPlans(schema: string, members: number): Promise<string[]> {
  const n = namesOf(schema);
  const e = expected(members);
  const at = decodeRunCursor(e.historyCursor);
  const queries: Array<[string, string, unknown[]]> = [
    ['tests page, from a cursor', testsPageSql(n, true), ['staging', null, 21, HISTORY_WINDOW, decodeNameCursor(e.testsCursor)]],
    ['history, from a cursor', historySql(n, true), ['staging', e.name, 51, at.endedAt, at.id]],
  ];
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    const out: string[] = [];
    for (const [what, sql, values] of queries) {
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF) ${sql}`, values);
      out.push(`${what}:`, ...rows.map((r) => `  ${r['QUERY PLAN']}`));
    }
    return out;
  } finally {
    await client.end();
  }
}

const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
/** BENCH_STORES=postgres (or sqlite) measures one store alone. */
const kinds = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',').filter((k): k is Kind => k === 'sqlite' || (k === 'postgres' && DATABASE_URL !== undefined));
console.log(`bench:history — ${cpus().length} cores, ${cpus()[0]?.model ?? '?'}, node ${process.version}`);
console.log(`${MEMBERS.toLocaleString('en')} members against ${BASELINE.toLocaleString('en')}; ${REQUESTS} sequential requests per scenario after ${WARMUP} warm-up ones`);
if (!DATABASE_URL) console.log('PostgreSQL skipped: RUNSET_TEST_DATABASE_URL is not set');
let worst = 0;
for (const kind of kinds) {
  const results = new Map<number, Figures[]>();
  for (const members of [BASELINE, MEMBERS]) {
    const store = await prepare(kind, members);
    console.log(`${kind}: ${members.toLocaleString('en')} members loaded in ${(store.loadMs / 1000).toFixed(1)} s`);
    const server = await startRunset({ config: CONFIG, dataDir: store.dataDir, args: ['--no-workers', ...store.args] });
    try {
      const figures: Figures[] = [];
      for (const [, route] of scenarios(members)) figures.push(await measure(`${server.url}${route}`, server.apiKey));
      results.set(members, figures);
      if (members === MEMBERS) for (const line of await store.plans()) console.log(`  plan ${line}`);
    } finally {
      await server.stop();
      await store.drop();
    }
  }
  console.log(`\n${kind} | scenario | ${BASELINE.toLocaleString('en')}: p50 / p99 | ${MEMBERS.toLocaleString('en')}: p50 / p99 | p99 ratio | body`);
  scenarios(MEMBERS).forEach(([what], i) => {
    const [small, big] = [results.get(BASELINE)![i]!, results.get(MEMBERS)![i]!];
    worst = Math.max(worst, big.p99);
    console.log(`${kind} | ${what} | ${fmt(small.p50)} / ${fmt(small.p99)} | ${fmt(big.p50)} / ${fmt(big.p99)} | ${(big.p99 / small.p99).toFixed(2)} | ${big.bytes} B`);
  });
  console.log('');
}
console.log(`worst p99 at ${MEMBERS.toLocaleString('en')}: ${fmt(worst)} (target < ${TARGET_P99_MS} ms) ${worst < TARGET_P99_MS ? 'OK' : 'OVER TARGET'}`);
