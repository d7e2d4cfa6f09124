/**
 * bench:uploads — a suite upload cannot take the API down (issue 39, item 1).
 *
 * One `runset serve` on SQLite with two worker slots in the same process (as
 * the crash was). While /api/health is polled every 50 ms, hostile
 * archives are uploaded one after another: the 2,600 and 300 entries
 * of 1 MB paths, paths past the path limit and past the bytes of all names,
 * the 24 MiB trailing-zero bomb, the same with 96 random bytes a MiB, a bomb
 * under the ratio with random bytes at its very end (all of it inflated
 * before the refusal), a tar gzipped twice.
 *
 * The route is warmed first with two small refused uploads (its first answers
 * compile its schemas and serializers, once a process, whatever the body).
 *
 * Printed: every answer's status, code and detail (budget: all 4xx with a
 * message); health's longest and p99 wait during the uploads against the same
 * figures idle before them (budget: ≤ 250 ms); the API process's resident
 * memory idle and at its peak (sampled with each poll; budget: peak < 2 × idle).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { newToken } from '../src/auth/keys.js';
import { gzippedTwice, lateNoiseBomb, longPaths, trailingBomb, type HostileArchive } from '../test/helpers/hostile-archives.js';
import { tempDir } from '../test/helpers/server.js';
import { startServe } from './runset-serve.js';

const BUDGET_MS = 250;
const IDLE_MS = 3000;
const key = newToken();
const root = tempDir('runset-bench-uploads-');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? NaN;

function residentMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
}

/** Polls health every 50 ms, sampling the process's resident memory with each answer, until stopped. */
function poll(url: string, pid: number, during: () => string = () => 'idle'): { stop: () => Promise<{ waits: number[]; rss: number[]; worst: Map<string, number> }> } {
  const waits: number[] = [];
  const rss: number[] = [];
  const worst = new Map<string, number>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const what = during();
      const res = await fetch(`${url}/health`);
      await res.arrayBuffer();
      const wait = performance.now() - started;
      waits.push(wait);
      worst.set(what, Math.max(worst.get(what) ?? 0, wait));
      rss.push(residentMb(pid));
      await sleep(50);
    }
  })();
  return { stop: async () => { running = false; await loop; return { waits, rss, worst }; } };
}

async function upload(url: string, archive: HostileArchive): Promise<{ status: number; code: string; detail: string; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${url}/v0/suites/${archive.id}`, { method: 'PUT', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/gzip' }, body: archive.bytes });
  const body = (await res.json()) as { code?: string; detail?: string };
  return { status: res.status, code: body.code ?? '', detail: body.detail ?? '', ms: performance.now() - started };
}

async function main(): Promise<void> {
  console.log('making the hostile archives…');
  const hostile: Array<[string, HostileArchive]> = [
    ['2,600 entries of 1 MB paths', await longPaths(2600, 1024 * 1024)],
    ['300 entries of 1 MB paths', await longPaths(300, 1024 * 1024)],
    ['500 paths of 2,000 bytes', await longPaths(500, 2000)],
    ['2,200 paths of 1,000 bytes (all names past 2 MiB)', await longPaths(2200, 1000)],
    ['24 MiB of zeros after the end marker', trailingBomb(24)],
    ['24 MiB, 96 random bytes a MiB', trailingBomb(24, 96)],
    ['96 MiB of zeros, 512 KiB random at the end (under the ratio)', lateNoiseBomb(96, 512)],
    ['a tar gzipped twice', gzippedTwice()],
  ];
  const config = path.join(root, 'runset.config.yaml');
  writeFileSync(config, 'environments:\n  bench: { allowSuiteUploads: true }\ntests: []\n');
  const { proc, url } = await startServe(config, path.join(root, 'data'), key, 2);
  try {
    // Warm up: the first answers of a route compile its schemas and serializers (once a process, whatever the body).
    for (let i = 0; i < 5; i++) await (await fetch(`${url}/health`)).arrayBuffer();
    const warm = gzippedTwice();
    await upload(url, { id: 'f'.repeat(64), bytes: warm.bytes }); // 400: not its hash
    await upload(url, warm); // 422
    await sleep(1000);
    const idlePoll = poll(url, proc.pid!);
    await sleep(IDLE_MS);
    const idle = await idlePoll.stop();
    const idleRss = percentile(idle.rss, 0.5);

    // This process's own event-loop delay: a wait it caused (sending 12 MB) is not the server's.
    const own = monitorEventLoopDelay({ resolution: 10 });
    own.enable();
    let current = hostile[0]![0];
    const busyPoll = poll(url, proc.pid!, () => current);
    const answers: Array<[string, number, Awaited<ReturnType<typeof upload>>]> = [];
    for (const [what, archive] of hostile) {
      current = what;
      answers.push([what, archive.bytes.length, await upload(url, archive)]);
      current = 'between uploads';
    }
    await sleep(500);
    const busy = await busyPoll.stop();
    own.disable();

    console.log('\nanswers:');
    for (const [what, size, a] of answers) {
      const health = busy.worst.get(what);
      console.log(`  ${a.status} ${a.code.padEnd(16)} ${String(Math.round(a.ms)).padStart(5)} ms (health's longest wait meanwhile ${health === undefined ? '-' : Math.round(health)} ms)  ${what} (${size.toLocaleString('en')} bytes sent): ${a.detail.slice(0, 160)}`);
    }
    const all4xx = answers.every(([, , a]) => a.status >= 400 && a.status < 500 && a.detail.length > 0);
    const [maxIdle, p99Idle, maxBusy, p99Busy] = [Math.max(...idle.waits), percentile(idle.waits, 0.99), Math.max(...busy.waits), percentile(busy.waits, 0.99)];
    const peakRss = Math.max(...busy.rss);
    console.log(`this poller's own event-loop delay during the uploads: max ${(own.max / 1e6).toFixed(1)} ms (a share of any wait above is its own)`);
    console.log(`\nhealth polls: ${idle.waits.length} idle, ${busy.waits.length} during the uploads`);
    console.log(`health wait idle:   max ${maxIdle.toFixed(1)} ms, p99 ${p99Idle.toFixed(1)} ms`);
    console.log(`health wait busy:   max ${maxBusy.toFixed(1)} ms, p99 ${p99Busy.toFixed(1)} ms (${(maxBusy / BUDGET_MS).toFixed(2)} × the ${BUDGET_MS} ms budget; ${(maxBusy / maxIdle).toFixed(1)} × idle's max)`);
    console.log(`resident memory:    idle ${idleRss.toFixed(0)} MB, peak ${peakRss.toFixed(0)} MB (${(peakRss / idleRss).toFixed(2)} × idle; budget < 2 ×)`);
    console.log(`verdict: answers ${all4xx ? 'all 4xx with a message' : 'NOT all 4xx'}; health ${maxBusy <= BUDGET_MS ? 'within' : 'OVER'} budget; memory ${peakRss < 2 * idleRss ? 'within' : 'OVER'} budget`);
    if (!all4xx || maxBusy > BUDGET_MS || peakRss >= 2 * idleRss) process.exitCode = 1;
  } finally {
    proc.kill('SIGTERM');
  }
}

await main();
