/**
 * bench:fanout — one Playwright suite spread over 1, 2 and 4 `runset worker`
 * processes of 2 slots each on PostgreSQL, against Playwright's own static
 * `--shard=i/4` run as 4 processes of `--workers=2` at once.
 *
 * The suite is browser-free (timers only, so the figures measure scheduling,
 * not Chromium): 28 cases of 1 s listed first and 4 of 10 s listed last, 68 s
 * of work. Playwright's shards split it by count, so the last shard gets the
 * four 10 s cases; runset's shares are cut by expected time, longest first.
 *
 * A first set (no history: every case counts alike) is run and printed apart;
 * the budgets are judged on the sets after it, when durations are known:
 * 4 workers ≥ 2.2 × faster than 1; wall time ≤ 1.6 × the ideal
 * (max(longest case, work / slots)); ≥ 20 % faster than the 4 static shards.
 * runset's time runs from the create request to the poll that sees the end.
 *
 * Needs PostgreSQL: RUNSET_BENCH_DATABASE_URL or RUNSET_TEST_DATABASE_URL.
 * BENCH_ROUNDS (1): measured sets per worker count.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { newToken } from '../src/auth/keys.js';
import { tempDir } from '../test/helpers/server.js';
import { Fleet, type ApiProcess, type WorkerProcess } from '../test/helpers/fleet.js';
import { dropSchemas, newSchemaName, query } from '../test/helpers/postgres.js';
import { createSet, getStatus, isEnded, listMembers, sleep, until } from '../test/helpers/scale.js';

const DATABASE_URL = process.env.RUNSET_BENCH_DATABASE_URL || process.env.RUNSET_TEST_DATABASE_URL;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const SLOTS = 2;
const QUICK = { count: 28, ms: 1000 };
const SLOW = { count: 4, ms: 10_000 };
const WORK_MS = QUICK.count * QUICK.ms + SLOW.count * SLOW.ms;
const PLAYWRIGHT_CLI = path.join(path.dirname(createRequire(import.meta.url).resolve('@playwright/test/package.json')), 'cli.js');
const MODULES = path.resolve(path.dirname(PLAYWRIGHT_CLI), '..', '..');

function writeSuite(dir: string): string {
  const suite = path.join(dir, 'suite');
  mkdirSync(path.join(suite, 'tests'), { recursive: true });
  writeFileSync(path.join(suite, 'package.json'), '{"name":"fanout-suite","private":true}\n');
  writeFileSync(
    path.join(suite, 'playwright.config.js'),
    "module.exports = { testDir: 'tests', fullyParallel: true, reporter: 'list' };\n",
  );
  const cases = (prefix: string, { count, ms }: { count: number; ms: number }) =>
    Array.from({ length: count }, (_, i) => `test('${prefix} ${i}', async () => { await new Promise((r) => setTimeout(r, ${ms})); });`).join('\n');
  writeFileSync(path.join(suite, 'tests', 'a-quick.spec.js'), `const { test } = require('@playwright/test');\n${cases('quick', QUICK)}\n`);
  writeFileSync(path.join(suite, 'tests', 'z-slow.spec.js'), `const { test } = require('@playwright/test');\n${cases('slow', SLOW)}\n`);
  const config = path.join(dir, 'runset.config.yaml');
  writeFileSync(config, `environments:\n  bench: { variables: {} }\ntests:\n  - { name: suite, type: playwright, dir: suite, workers: ${SLOTS} }\n`);
  return config;
}

interface SetFigures {
  wallMs: number;
  perWorker: number[];
}

/** Creates a set and polls (every 100 ms) until it ends; members per worker from the members list. */
async function runSet(api: ApiProcess): Promise<SetFigures> {
  const started = Date.now();
  const id = await createSet(api, 'bench');
  for (;;) {
    const status = await getStatus(api, id);
    if (isEnded(status)) {
      const wallMs = Date.now() - started;
      if (status.status !== 'SUCCESS') throw new Error(`set ${id} ended ${status.status}`);
      const members = await listMembers(api, id);
      const counts = new Map<string, number>();
      for (const m of members) counts.set(m.workerId ?? '?', (counts.get(m.workerId ?? '?') ?? 0) + 1);
      return { wallMs, perWorker: [...counts.values()].sort((a, b) => b - a) };
    }
    await sleep(100);
  }
}

/** Playwright alone: `--shard=i/4 --workers=2`, four processes at once; wall time until the last exits. */
async function staticShards(suite: string, shards: number): Promise<number> {
  const started = Date.now();
  await Promise.all(
    Array.from({ length: shards }, (_, i) =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, [PLAYWRIGHT_CLI, 'test', `--shard=${i + 1}/${shards}`, `--workers=${SLOTS}`, '--reporter=dot'], {
          cwd: suite,
          // NODE_PATH: the suite has no node_modules of its own (runset gives it its own Playwright the same way).
          env: { ...process.env, NODE_PATH: MODULES },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let err = '';
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`shard ${i + 1} exited ${code}: ${err}`))));
      }),
    ),
  );
  return Date.now() - started;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  if (!DATABASE_URL) {
    console.log('bench:fanout needs PostgreSQL: set RUNSET_BENCH_DATABASE_URL or RUNSET_TEST_DATABASE_URL');
    process.exitCode = 2;
    return;
  }
  const dir = tempDir('runset-fanout-');
  const configPath = writeSuite(dir);
  const schema = newSchemaName('runset_fanout');
  const fleet = new Fleet({ databaseUrl: DATABASE_URL, schema, configPath, apiKey: newToken() });
  const workers: WorkerProcess[] = [];
  const scaleTo = async (n: number) => {
    while (workers.length > n) await workers.pop()!.stop();
    while (workers.length < n) workers.push(await fleet.worker(SLOTS));
    // Every worker is in the registry before the set is created, as in a steady fleet.
    await until(`${n} workers registered`, async () => {
      const [row] = await query<{ n: number }>(DATABASE_URL, `SELECT count(*)::integer AS n FROM "${schema}".workers`);
      return row?.n === n;
    });
  };
  const api = await fleet.api();
  try {
    console.log(`bench:fanout — ${QUICK.count} cases of ${QUICK.ms / 1000} s listed first, ${SLOW.count} of ${SLOW.ms / 1000} s last (${WORK_MS / 1000} s of work); workers of ${SLOTS} slots on PostgreSQL`);
    await scaleTo(4);
    const first = await runSet(api);
    console.log(`first set (no history), 4 workers: ${seconds(first.wallMs)}, members per worker ${first.perWorker.join('/')}`);

    const results = new Map<number, number[]>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const n of [1, 2, 4]) {
        await scaleTo(n);
        const r = await runSet(api);
        const ideal = Math.max(SLOW.ms, WORK_MS / (n * SLOTS));
        results.set(n, [...(results.get(n) ?? []), r.wallMs]);
        console.log(`round ${round}: ${n} worker(s): ${seconds(r.wallMs)}, ideal ${seconds(ideal)}, ratio to ideal ${(r.wallMs / ideal).toFixed(2)}, members per worker ${r.perWorker.join('/')}`);
      }
    }
    await scaleTo(0);
    const shards: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      shards.push(await staticShards(path.join(dir, 'suite'), 4));
      console.log(`round ${round}: Playwright --shard=i/4 --workers=${SLOTS}, 4 processes at once: ${seconds(shards.at(-1)!)}`);
    }

    const best = (xs: number[]) => Math.min(...xs);
    const one = best(results.get(1)!);
    const four = best(results.get(4)!);
    const ideal4 = Math.max(SLOW.ms, WORK_MS / (4 * SLOTS));
    const shard = best(shards);
    const speedup = one / four;
    const toIdeal = four / ideal4;
    const vsShards = 1 - four / shard;
    console.log('');
    console.log(`4 workers vs 1: ${speedup.toFixed(2)} × faster (budget ≥ 2.2) ${speedup >= 2.2 ? 'ok' : 'OVER BUDGET'}`);
    console.log(`4 workers vs ideal ${seconds(ideal4)}: ${toIdeal.toFixed(2)} × (budget ≤ 1.6) ${toIdeal <= 1.6 ? 'ok' : 'OVER BUDGET'}`);
    console.log(`4 workers vs 4 static shards: ${(vsShards * 100).toFixed(0)} % faster (budget ≥ 20 %) ${vsShards >= 0.2 ? 'ok' : 'OVER BUDGET'}`);
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await api.stop();
    await fleet.teardown();
    await dropSchemas(DATABASE_URL, [schema]);
  }
}

await main();
