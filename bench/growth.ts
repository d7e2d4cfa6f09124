/**
 * bench:growth — does runset slow down as history piles up? The same store is
 * filled with BENCH_SMALL (1,000) and BENCH_LARGE (1,000,000) ended sets of 10
 * members, on SQLite and (with RUNSET_TEST_DATABASE_URL) on PostgreSQL, and a
 * `runset serve` on each answers the same requests, the two servers
 * alternated round by round so a busy moment hits both:
 *   the status GET and the members GET of random sets from all of history, a
 *   create, the list's first page, the list filtered by environment and status,
 *   and a page deep in the cursor (random positions).
 * Printed per store and size: p50/p99 of each, serve's resident memory (the
 * median of a reading after each kind of request in every round: 40 readings,
 * so one garbage collection more or less moves it little), and the store's
 * bytes per set; then each large/small ratio. BENCH_STORES (default
 * sqlite,postgres) picks the stores. Sets are read from the newest 1,000 (what CI pollers and
 * the dashboard read); the same reads of sets from all of history are printed
 * too, outside the budget (at the large size their pages are cold).
 * Budget (issue 16): every p99 within 1.25 × at the large size, memory within 1.2 ×.
 *
 * How history is made: three sets really run (SUCCESS and FAIL in one
 * environment, SUCCESS in another), then are cloned in SQL with fresh UUIDs
 * (UUIDv7, as runset makes them) and times 5 s apart going back
 * (bench/clone-history.ts): 1,000,000 sets span 58 days, inside the default
 * retention.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { startRunset, tempDir, type RunningServer } from '../test/helpers/server.js';
import { dropSchemas, newSchemaName, query } from '../test/helpers/postgres.js';
import { encodeCursor } from '../src/store/browse.js';
import { STORE_FILE } from '../src/store/sqlite/backup.js';
import { cloneSqliteHistory, clonePostgresHistory } from './clone-history.js';

const SMALL = Number(process.env.BENCH_SMALL ?? 1_000);
const LARGE = Number(process.env.BENCH_LARGE ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PER_ROUND = Number(process.env.BENCH_PER_ROUND ?? 200);
const DATABASE_URL = process.env.RUNSET_TEST_DATABASE_URL;
const SPACING_SECONDS = 5;
const CONFIG = `environments:
  bench: { variables: { OUTCOME: "0" } }
  other: { variables: { OUTCOME: "0" } }
tests:
${Array.from({ length: 9 }, (_, i) => `  - { name: step-${i + 1}, type: command, run: ["true"] }`).join('\n')}
  - { name: verdict, type: command, run: [sh, -c, 'exit $OUTCOME'] }
`;

/** A set to read: its id, and its place in the list (for a cursor). */
type Pick = { createdAt: string; id: string };

/** Where one store of the bench lives: a data dir (SQLite) or a schema (PostgreSQL). */
interface Place {
  dataDir: string;
  schema: string;
}

interface Store {
  name: string;
  args: (place: Place) => string[];
  /** Clones the templates until the store holds `sets` sets. */
  fill(place: Place, templateIds: string[], sets: number): Promise<void> | void;
  /** (createdAt, id) of `count` ended sets: the newest, or at random from all of history. */
  sample(place: Place, count: number, from: 'newest' | 'history'): Promise<Pick[]> | Pick[];
  bytes(place: Place): Promise<number> | number;
  cleanup(): Promise<void> | void;
}

function sqliteStore(): Store {
  const file = (place: Place) => path.join(place.dataDir, STORE_FILE);
  return {
    name: 'SQLite',
    args: () => [],
    fill(place, templateIds, sets) {
      cloneSqliteHistory(file(place), { templateIds, clones: sets - templateIds.length, spacingSeconds: SPACING_SECONDS, onProgress: progress(sets) });
    },
    sample(place, count, from) {
      const db = new Database(file(place), { readonly: true });
      try {
        const order = from === 'newest' ? 'created_at DESC' : 'random()';
        return db.prepare(`SELECT created_at AS createdAt, id FROM test_run_sets WHERE ended_at IS NOT NULL ORDER BY ${order} LIMIT ?`).all(count) as Pick[];
      } finally {
        db.close();
      }
    },
    bytes(place) {
      const db = new Database(file(place));
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
      return statSync(file(place)).size;
    },
    cleanup() {},
  };
}

function postgresStore(url: string): Store {
  const schemas: string[] = [];
  return {
    name: 'PostgreSQL',
    args: (place) => {
      schemas.push(place.schema);
      return ['--database-url', url, '--database-schema', place.schema];
    },
    async fill(place, templateIds, sets) {
      await clonePostgresHistory(url, place.schema, { templateIds, clones: sets - templateIds.length, spacingSeconds: SPACING_SECONDS, onProgress: progress(sets) });
    },
    async sample(place, count, from) {
      const order = from === 'newest' ? 'created_at DESC' : 'random()';
      const rows = await query<{ created_at: Date; id: string }>(url, `SELECT created_at, id FROM ${place.schema}.test_run_sets WHERE ended_at IS NOT NULL ORDER BY ${order} LIMIT ${count}`);
      return rows.map((r) => ({ createdAt: r.created_at.toISOString(), id: r.id }));
    },
    async bytes(place) {
      const [row] = await query<{ bytes: string }>(
        url,
        `SELECT sum(pg_total_relation_size(c.oid))::text AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
        [place.schema],
      );
      return Number(row?.bytes ?? 0);
    },
    async cleanup() {
      await dropSchemas(url, schemas);
    },
  };
}

function progress(total: number): (done: number) => void {
  let last = 0;
  return (done) => {
    if (done - last >= total / 10 || done + 3 >= total) {
      process.stdout.write(`  … ${done.toLocaleString('en')} cloned\n`);
      last = done;
    }
  };
}

async function call(server: RunningServer, method: string, url: string, body?: string): Promise<string> {
  const res = await fetch(server.url + url, {
    method,
    headers: { authorization: `Bearer ${server.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status}: ${text.slice(0, 200)}`);
  return text;
}

async function waitEnded(server: RunningServer, id: string): Promise<void> {
  for (;;) {
    const { status } = JSON.parse(await call(server, 'GET', `/v0/test-run-sets/${id}`)) as { status: string };
    if (status === 'SUCCESS' || status === 'FAIL') return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A store of `sets` ended sets, filled by cloning three sets a real `serve` ran; returns where it is and the key that reads it. */
async function fill(store: Store, sets: number): Promise<{ place: Place; args: string[]; apiKey: string }> {
  const place = { dataDir: path.join(tempDir('runset-growth-'), 'data'), schema: newSchemaName('runset_growth') };
  const args = store.args(place);
  const runner = await startRunset({ config: CONFIG, dataDir: place.dataDir, args: [...args, '--workers', '2'], env: { RUNSET_SETS_PER_MINUTE: '1000000' } });
  const bodies = ['{"env":"bench"}', '{"env":"bench","envOverride":{"OUTCOME":"1"}}', '{"env":"other"}'];
  const templateIds: string[] = [];
  try {
    for (const body of bodies) {
      const { testRunSetId } = JSON.parse(await call(runner, 'POST', '/v0/test-run-sets', body)) as { testRunSetId: string };
      await waitEnded(runner, testRunSetId);
      templateIds.push(testRunSetId);
    }
  } finally {
    await runner.stop();
  }
  const started = performance.now();
  await store.fill(place, templateIds, sets);
  console.log(`  ${store.name}: ${sets.toLocaleString('en')} sets in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return { place, args, apiKey: runner.apiKey };
}

/**
 * A worker-less `serve` on a filled store, ready to measure. Both sizes' servers
 * are started together, after both fills: a process that idled through the
 * other store's fill keeps a smaller heap for a long while after (V8's memory
 * reducer), which once read as 1.3 × more memory at the large size.
 */
async function serve(store: Store, filled: Awaited<ReturnType<typeof fill>>): Promise<{ server: RunningServer; place: Place; newest: Pick[]; history: Pick[] }> {
  const { place, args, apiKey } = filled;
  const server = await startRunset({ config: CONFIG, dataDir: place.dataDir, apiKey, args: [...args, '--no-workers'], env: { RUNSET_SETS_PER_MINUTE: '1000000' } });
  return { server, place, newest: await store.sample(place, 1000, 'newest'), history: await store.sample(place, 1000, 'history') };
}

interface Operation {
  /** Which sets it reads: the newest 1,000 (what CI pollers and the dashboard read), or any from all of history. */
  picks: 'newest' | 'history';
  /** Within the 1.25 × p99 budget; an old set's page may have to come from disk at the large size. */
  budgeted: boolean;
  run: (server: RunningServer, pick: Pick) => Promise<unknown>;
}
const OPERATIONS: Record<string, Operation> = {
  'status GET': { picks: 'newest', budgeted: true, run: (s, p) => call(s, 'GET', `/v0/test-run-sets/${p.id}`) },
  'members GET': { picks: 'newest', budgeted: true, run: (s, p) => call(s, 'GET', `/v0/test-run-sets/${p.id}/test-runs`) },
  create: { picks: 'newest', budgeted: true, run: (s) => call(s, 'POST', '/v0/test-run-sets', '{"env":"bench"}') },
  'list, first page': { picks: 'newest', budgeted: true, run: (s) => call(s, 'GET', '/v0/test-run-sets') },
  'list, env + status': { picks: 'newest', budgeted: true, run: (s) => call(s, 'GET', '/v0/test-run-sets?env=bench&status=FAIL') },
  'list, deep page': { picks: 'history', budgeted: true, run: (s, p) => call(s, 'GET', `/v0/test-run-sets?cursor=${encodeCursor(p)}`) },
  'status GET, old set': { picks: 'history', budgeted: false, run: (s, p) => call(s, 'GET', `/v0/test-run-sets/${p.id}`) },
  'members GET, old set': { picks: 'history', budgeted: false, run: (s, p) => call(s, 'GET', `/v0/test-run-sets/${p.id}/test-runs`) },
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** serve's resident memory in MB, and the part of it that is anonymous (heap, SQLite's cache: not the mapped binary). */
function residentMb(server: RunningServer): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${server.proc.pid}/status`, 'utf8');
  const mb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: mb('VmRSS'), anon: mb('RssAnon') };
}

async function benchStore(store: Store): Promise<boolean> {
  console.log(`\n${store.name}: filling`);
  const filled: Awaited<ReturnType<typeof fill>>[] = [];
  const servers: RunningServer[] = [];
  try {
    for (const sets of [SMALL, LARGE]) filled.push(await fill(store, sets));
    const [small, large] = [await serve(store, filled[0]!), await serve(store, filled[1]!)];
    servers.push(small.server, large.server);
    const sides = [
      { label: SMALL.toLocaleString('en'), ...small, times: new Map<string, number[]>(), resident: [] as { rss: number; anon: number }[] },
      { label: LARGE.toLocaleString('en'), ...large, times: new Map<string, number[]>(), resident: [] as { rss: number; anon: number }[] },
    ];
    for (const side of sides) for (const op of Object.values(OPERATIONS)) for (let i = 0; i < 50; i++) await op.run(side.server, side[op.picks][i]!); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        for (const [name, op] of Object.entries(OPERATIONS)) {
          const times = side.times.get(name) ?? [];
          const picks = side[op.picks];
          for (let i = 0; i < PER_ROUND; i++) {
            const pick = picks[Math.floor(Math.random() * picks.length)]!;
            const t0 = performance.now();
            await op.run(side.server, pick);
            times.push(performance.now() - t0);
          }
          side.times.set(name, times);
          side.resident.push(residentMb(side.server));
        }
      }
    }
    const rows: string[] = [];
    let within = true;
    for (const [name, op] of Object.entries(OPERATIONS)) {
      const [a, b] = sides.map((side) => side.times.get(name)!.sort((x, y) => x - y));
      const ratio = percentile(b!, 99) / percentile(a!, 99);
      if (op.budgeted) within &&= ratio <= 1.25;
      const verdict = !op.budgeted ? '  (not budgeted)' : ratio > 1.25 ? '  OVER 1.25' : '';
      rows.push(
        `  ${name.padEnd(22)} p50 ${percentile(a!, 50).toFixed(2)} / ${percentile(b!, 50).toFixed(2)} ms   p99 ${percentile(a!, 99).toFixed(2)} / ${percentile(b!, 99).toFixed(2)} ms   p99 ×${ratio.toFixed(2)}${verdict}`,
      );
    }
    // Resident memory moves with garbage collection: the median of a reading after each kind of request.
    const median = (values: number[]) => values.sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
    const [memA, memB] = sides.map((side) => median(side.resident.map((r) => r.rss)));
    const [anonA, anonB] = sides.map((side) => median(side.resident.map((r) => r.anon)));
    const [bytesA, bytesB] = await Promise.all(sides.map(async (side) => store.bytes(side.place)));
    within &&= memB! / memA! <= 1.2;
    console.log(`${store.name}: ${sides[0]!.label} / ${sides[1]!.label} ended sets of 10 members (${ROUNDS} alternated rounds × ${PER_ROUND} sequential requests each)`);
    for (const row of rows) console.log(row);
    console.log(`  ${'serve resident'.padEnd(22)} ${memA!.toFixed(0)} / ${memB!.toFixed(0)} MB   ×${(memB! / memA!).toFixed(2)}${memB! / memA! > 1.2 ? '  OVER 1.2' : ''}   (anonymous ${anonA!.toFixed(0)} / ${anonB!.toFixed(0)} MB)`);
    console.log(`  ${'store per set'.padEnd(22)} ${(bytesA! / SMALL / 1024).toFixed(1)} / ${(bytesB! / LARGE / 1024).toFixed(1)} KB (${(bytesB! / 2 ** 30).toFixed(2)} GB at ${sides[1]!.label})`);
    return within;
  } finally {
    for (const server of servers) await server.stop();
    for (const { place } of filled) rmSync(path.dirname(place.dataDir), { recursive: true, force: true }); // gigabytes at the large size
  }
}

console.log(`bench:growth — ${cpus().length} cores, ${cpus()[0]?.model ?? '?'}, node ${process.version}`);
const STORES = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',');
const unknown = STORES.filter((name) => name !== 'sqlite' && name !== 'postgres');
if (unknown.length > 0) throw new Error(`BENCH_STORES: unknown store(s) ${unknown.join(', ')}; accepted: sqlite, postgres, or both comma-separated (default sqlite,postgres)`);
const stores = [...(STORES.includes('sqlite') ? [sqliteStore()] : []), ...(DATABASE_URL && STORES.includes('postgres') ? [postgresStore(DATABASE_URL)] : [])];
if (!DATABASE_URL) console.log('(RUNSET_TEST_DATABASE_URL is not set: SQLite only)');
let allWithin = true;
for (const store of stores) {
  try {
    allWithin = (await benchStore(store)) && allWithin;
  } finally {
    await store.cleanup();
  }
}
console.log(allWithin ? '\nwithin budget' : '\nOVER BUDGET (see above)');
