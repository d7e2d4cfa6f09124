/**
 * bench:wait — 200 sets followed by 200 clients (the SDK's waitForTestRunSet,
 * as `runset trigger --wait` uses it), once with waiting reads (ETag +
 * `Prefer: wait`, the default) and once polling every 10 s (seed 4.3's
 * example, `longPoll: false`), over the same sets: each set is one command
 * sleeping 1–12 s (the same seeded spread in both runs), all 200 at once.
 *
 * Printed per run: requests made (and per set), and the delay from a set's end
 * (its endedAt, written by the store) to its client seeing it (the SDK's
 * progress callback with the final status). Budget: waiting reads' median
 * delay under 100 ms, and fewer requests than polling every 10 s.
 *
 * On SQLite (one `serve`, 200 worker slots) and, when RUNSET_BENCH_DATABASE_URL
 * or RUNSET_TEST_DATABASE_URL is set, on PostgreSQL (an API process with no
 * workers, and a `runset worker` process with 200 slots, as on many machines).
 *
 * Then sets whose status changes between two reads (./wait-clients.ts): six
 * members ending 0.5 s apart, followed to the end by each real client — the
 * SDK, `runset trigger --wait` and the GitHub Action — from the set's endedAt
 * to the client's exit. Budget: median < 100 ms, max < 1 s.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { newToken } from '../src/auth/keys.js';
import { RunsetClient } from '../src/client/index.js';
import { startRunset, tempDir } from '../test/helpers/server.js';
import { Fleet } from '../test/helpers/fleet.js';
import { dropSchemas, newSchemaName } from '../test/helpers/postgres.js';
import { STAGED_TESTS, followEveryClient } from './wait-clients.js';

const DATABASE_URL = process.env.RUNSET_BENCH_DATABASE_URL || process.env.RUNSET_TEST_DATABASE_URL;
const SETS = Number(process.env.BENCH_SETS ?? 200);
const CONFIG = `environments:\n  bench: { variables: { DELAY: "1" } }\n  staged: { variables: { STAGE: "1" } }\ntests:\n  - { name: sleep, type: command, run: [sh, -c, 'exec sleep "$DELAY"'], environments: [bench] }\n${STAGED_TESTS}`;

interface Server {
  url: string;
  apiKey: string;
}

interface RunFigures {
  requests: number;
  delays: number[];
}

/** A fixed spread of durations (1.0–12.0 s), the same in every run: a small LCG, seeded. */
function delays(n: number): string[] {
  let x = 42;
  return Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return (1 + (x / 2 ** 31) * 11).toFixed(1);
  });
}

async function follow(server: Server, longPoll: boolean): Promise<RunFigures> {
  let requests = 0;
  const counting: typeof fetch = (input, init) => {
    if ((init?.method ?? 'GET') === 'GET') requests++;
    return fetch(input, init);
  };
  const client = new RunsetClient({ url: server.url, apiKey: server.apiKey, fetch: counting, requestTimeout: '60s' });
  const ids = await Promise.all(delays(SETS).map((DELAY) => client.createTestRunSet({ env: 'bench', envOverride: { DELAY } }).then((r) => r.testRunSetId)));
  const figures = await Promise.all(
    ids.map(async (id) => {
      let seenAt = 0;
      const final = await client.waitForTestRunSet(id, {
        interval: '10s',
        timeout: '2m',
        longPoll,
        onProgress: (s) => {
          if (s.status === 'SUCCESS' || s.status === 'FAIL') seenAt = Date.now();
        },
      });
      if (final.status !== 'SUCCESS') throw new Error(`set ${id} ended ${final.status}`);
      return seenAt - Date.parse(final.endedAt!);
    }),
  );
  return { requests, delays: figures };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

function report(store: string, waiting: RunFigures, polling: RunFigures): void {
  const line = (name: string, f: RunFigures) => {
    const d = [...f.delays].sort((a, b) => a - b);
    return `${store.padEnd(10)} ${name.padEnd(16)} requests ${String(f.requests).padStart(5)} (${(f.requests / SETS).toFixed(1)}/set)  delay to the client: median ${pct(d, 50)} ms, p95 ${pct(d, 95)} ms, max ${d.at(-1)} ms`;
  };
  console.log(line('waiting reads', waiting));
  console.log(line('poll every 10s', polling));
  const median = pct([...waiting.delays].sort((a, b) => a - b), 50);
  console.log(
    `${store.padEnd(10)} waiting reads make ${(waiting.requests / polling.requests).toFixed(2)} × the requests of polling; median delay ${median} ms (budget < 100 ms): ${median < 100 && waiting.requests < polling.requests ? 'within budget' : 'OVER BUDGET'}`,
  );
}

async function onSqlite(): Promise<void> {
  const server = await startRunset({ config: CONFIG, args: ['--workers', String(Math.min(SETS, 256))], env: { RUNSET_SETS_PER_MINUTE: '100000' } });
  try {
    report('sqlite', await follow(server, true), await follow(server, false));
    await followEveryClient('sqlite', server);
  } finally {
    await server.stop();
  }
}

async function onPostgres(url: string): Promise<void> {
  const dir = tempDir('runset-bench-wait-');
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, CONFIG);
  const schema = newSchemaName('runset_bench_wait');
  const fleet = new Fleet({ databaseUrl: url, schema, configPath, apiKey: newToken() });
  try {
    const api = await fleet.api();
    const worker = await fleet.worker(Math.min(SETS, 256));
    report('postgres', await follow(api, true), await follow(api, false));
    await followEveryClient('postgres', api);
    await api.stop();
    await worker.stop();
  } finally {
    await fleet.teardown(5000);
    await dropSchemas(url, [schema]);
  }
}

console.log(`bench:wait — ${SETS} sets of one command sleeping 1–12 s, each followed by its own client`);
await onSqlite();
if (DATABASE_URL) await onPostgres(DATABASE_URL);
else console.log('postgres   skipped: set RUNSET_BENCH_DATABASE_URL or RUNSET_TEST_DATABASE_URL');
