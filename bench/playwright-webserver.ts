/**
 * bench:playwright, the webServer case: a suite shaped like a real public one —
 * a `webServer` on a fixed port that takes BENCH_SERVER_START_MS (3 s) to
 * listen, 100 tests of uneven length (0.05–1.2 s of waiting, a third of them in
 * Chromium, the rest against the server through Playwright's request fixture)
 * in 20 files — run by `runset serve --workers 1` (entry `workers: 1`) against
 * `playwright test --workers=1` directly, same Chromium, rounds alternated after
 * one warm-up each (runset's teaches it the durations). Budget: runset's median
 * ≤ 1.1 × Playwright's. It prints how many Playwright processes each set took
 * (the server's own log: one start per process): one, if the suite's start-up
 * is paid once.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { newToken } from '../src/auth/keys.js';
import { tempDir } from '../test/helpers/server.js';
import { runsetRound, startServe } from './runset-serve.js';
import { runDirectly, serverRuns, writeWebServerSuite } from '../test/helpers/webserver-suite.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const START_MS = Number(process.env.BENCH_SERVER_START_MS ?? 3000);
const BUDGET = 1.1;

/** A fixed, uneven spread of waits: the same every run. */
function waitMs(i: number): number {
  return 50 + ((i * 7919) % 23) * 50;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export async function webServerCase(): Promise<boolean> {
  const dir = tempDir('runset-bench-webserver-');
  const suite = await writeWebServerSuite(dir, { files: 20, tests: 100, startMs: START_MS, workers: 1, waitMs, usesPage: (i) => i % 3 === 0 });
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, 'environments:\n  bench: { variables: {} }\ntests:\n  - { name: shop, type: playwright, dir: suite, workers: 1 }\n');
  const key = newToken();
  const serve = await startServe(configPath, path.join(dir, 'data'), key, 1);
  const work = Array.from({ length: 100 }, (_, i) => waitMs(i)).reduce((a, b) => a + b, 0);
  console.log(`\nwebServer case: 100 tests in 20 files (${(work / 1000).toFixed(1)} s of waiting), a webServer on port ${suite.port} that takes ${START_MS / 1000} s to start; serve --workers 1 against playwright test --workers=1`);
  const times = { runset: [] as number[], playwright: [] as number[] };
  /** Server starts during `fn`: one per Playwright process. */
  const processes = async (fn: () => Promise<number>): Promise<{ ms: number; starts: number }> => {
    const before = serverRuns(suite.serverLog).length;
    const ms = await fn();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the server's stop line comes just after the set ends
    return { ms, starts: serverRuns(suite.serverLog).length - before };
  };
  try {
    await runDirectly(suite.dir, 1); // warm-up: Playwright's compile cache, the page cache of Chromium's files
    const first = await processes(() => runsetRound(serve.url, key));
    console.log(`warm-up set (no history): ${seconds(first.ms)}, ${first.starts} Playwright process(es)`);
    for (let i = 0; i < ROUNDS; i++) {
      const direct = await processes(async () => {
        const { outcomes, wallMs } = await runDirectly(suite.dir, 1);
        if ([...outcomes.values()].some((o) => o !== 'SUCCESS')) throw new Error('the direct run failed');
        return wallMs;
      });
      const runset = await processes(() => runsetRound(serve.url, key));
      times.playwright.push(direct.ms);
      times.runset.push(runset.ms);
      console.log(`round ${i + 1}: playwright test ${seconds(direct.ms)} (${direct.starts} process) | runset ${seconds(runset.ms)} (${runset.starts} Playwright process(es))`);
    }
  } finally {
    serve.proc.kill('SIGTERM');
  }
  const ratio = median(times.runset) / median(times.playwright);
  console.log(`median: playwright test ${seconds(median(times.playwright))}, runset ${seconds(median(times.runset))}`);
  console.log(`runset/playwright median ratio: ${ratio.toFixed(2)} (budget ≤ ${BUDGET}) ${ratio <= BUDGET ? 'OK' : 'OVER BUDGET'}`);
  return ratio <= BUDGET;
}
