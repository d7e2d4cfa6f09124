/**
 * bench:queue — an environment's queue on PostgreSQL (issue 29): BENCH_SETS
 * (50) sets created at once on an environment with `maxConcurrentSets:
 * BENCH_LIMIT` (2), run by one real `runset serve` with BENCH_SLOTS (4) worker
 * slots (more than the limit lets run, so a breach would have room to happen).
 * Each set has two members sleeping BENCH_SLEEP_MS (200).
 *
 * Everything is read afterwards from the members' own start and end times (the
 * store's clock), a set's span being its first member's start to its last
 * member's end:
 * - start order against creation order (the store's numbering, `queue_seq`):
 *   how many sets started out of their place;
 * - the most sets running at once (at each start, the sets started before and
 *   not ended): must equal the limit;
 * - the hand-over delay: the k-th set started from the queue against the k-th
 *   set end (the end that freed its place); budget: median under 100 ms.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { newToken } from '../src/auth/keys.js';
import { tempDir } from '../test/helpers/server.js';
import { createSet, listMembers, waitForSets, type Member } from '../test/helpers/scale.js';
import { startServe } from './runset-serve.js';

const SETS = Number(process.env.BENCH_SETS ?? 50);
const LIMIT = Number(process.env.BENCH_LIMIT ?? 2);
const SLOTS = Number(process.env.BENCH_SLOTS ?? 4);
const SLEEP_MS = Number(process.env.BENCH_SLEEP_MS ?? 200);
const BUDGET_MS = 100;
const PG_URL = process.env.RUNSET_BENCH_DATABASE_URL || process.env.RUNSET_TEST_DATABASE_URL;
if (!PG_URL) throw new Error('bench:queue needs PostgreSQL: set RUNSET_BENCH_DATABASE_URL or RUNSET_TEST_DATABASE_URL');

const schema = `runset_bench_queue_${process.pid}`;
const dir = tempDir('runset-bench-queue-');
const config = path.join(dir, 'runset.config.yaml');
const sleep = `[sh, -c, 'sleep ${SLEEP_MS / 1000}']`;
writeFileSync(config, `environments:\n  shared: { maxConcurrentSets: ${LIMIT} }\ntests:\n  - { name: first, type: command, run: ${sleep} }\n  - { name: second, type: command, run: ${sleep} }\n`);

/** A set's running span from its members (ms since the epoch). */
function spanOf(members: readonly Member[]): { start: number; end: number } {
  const starts = members.map((m) => Date.parse(m.startedAt ?? ''));
  const ends = members.map((m) => Date.parse(m.endedAt ?? ''));
  if ([...starts, ...ends].some(Number.isNaN)) throw new Error('a member never started or never ended');
  return { start: Math.min(...starts), end: Math.max(...ends) };
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const pct = (xs: number[], p: number) => sorted(xs)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;

async function main(): Promise<void> {
  const db = new pg.Client({ connectionString: PG_URL });
  await db.connect();
  const key = newToken();
  const serve = await startServe(config, path.join(dir, 'data'), key, SLOTS, { RUNSET_DATABASE_URL: PG_URL!, RUNSET_DATABASE_SCHEMA: schema });
  const server = { url: serve.url, apiKey: key };
  try {
    console.log(`bench:queue: ${SETS} sets created at once, maxConcurrentSets ${LIMIT}, ${SLOTS} worker slots, 2 members × sleep ${SLEEP_MS} ms each; PostgreSQL`);
    const started = Date.now();
    const ids = await Promise.all(Array.from({ length: SETS }, () => createSet(server, 'shared')));
    await waitForSets(server, ids, 10 * 60_000);
    const wallMs = Date.now() - started;

    const { rows } = await db.query<{ id: string }>(`SELECT id FROM "${schema}".test_run_sets ORDER BY queue_seq`);
    const spans = await Promise.all(rows.map(async ({ id }) => ({ id, ...spanOf(await listMembers(server, id)) })));

    // Start order: each set's place by start against its place by creation.
    const byStart = [...spans].sort((a, b) => a.start - b.start || spans.indexOf(a) - spans.indexOf(b));
    const outOfPlace = byStart.filter((s, i) => spans[i]!.id !== s.id).length;
    const ties = byStart.filter((s, i) => i > 0 && byStart[i - 1]!.start === s.start).length;

    let most = 0;
    for (const s of spans) most = Math.max(most, spans.filter((o) => o.start <= s.start && o.end > s.start).length);

    // The k-th set started from the queue took the place the k-th end freed.
    const ends = sorted(spans.map((s) => s.end));
    const handovers = byStart.slice(LIMIT).map((s, k) => s.start - ends[k]!);
    const median = pct(handovers, 0.5);
    const runMs = pct(spans.map((s) => s.end - s.start), 0.5);

    console.log(`${SETS} sets ended in ${wallMs} ms (ideal ${Math.ceil(SETS / LIMIT)} × ${runMs} ms median set span = ${Math.ceil(SETS / LIMIT) * runMs} ms, ratio ${(wallMs / (Math.ceil(SETS / LIMIT) * runMs)).toFixed(2)})`);
    console.log(`start order: ${outOfPlace === 0 ? 'creation order' : `${outOfPlace} of ${SETS} sets out of creation order`}${ties ? ` (${ties} started in the same ms as the one before)` : ''}`);
    console.log(`hand-over delay (a set's end → the next queued set's start): median ${median} ms, p90 ${pct(handovers, 0.9)} ms, max ${Math.max(...handovers)} ms, min ${Math.min(...handovers)} ms over ${handovers.length}`);
    console.log(`verdict: most sets running at once ${most} (must be ${LIMIT}): ${most === LIMIT ? 'PASS' : 'FAIL'}`);
    console.log(`verdict: start order is creation order: ${outOfPlace === 0 ? 'PASS' : 'FAIL'}`);
    console.log(`verdict: median hand-over ${median} ms (budget < ${BUDGET_MS} ms, ${(median / BUDGET_MS).toFixed(2)} × budget): ${median < BUDGET_MS ? 'PASS' : 'FAIL'}`);
  } finally {
    serve.proc.kill('SIGTERM');
    await new Promise((resolve) => (serve.proc.exitCode !== null ? resolve(null) : serve.proc.once('exit', resolve)));
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await db.end();
  }
}

await main();
