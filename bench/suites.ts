/**
 * bench:suites — what a suite that travels with the set costs (issue 27).
 *
 * One `runset serve` on SQLite with two worker slots and an empty suite cache.
 * The same suite (one command test that prints the time it started, and one
 * small npm dependency, so that the version has a lockfile to install) runs
 * three ways; each figure is create → the test's own first line (the set's
 * createdAt against the time the test printed: one machine, one clock):
 * (a) the server's own config, its dependencies installed beforehand (today's way);
 * (b) a new version, its lockfile never seen: fetch, check, unpack, npm ci;
 * (c) another new version with the same lockfile: fetch, check, unpack, link.
 * Budget: (c) within 1.5 s of (a).
 *
 * Upload: a 10 MB archive (incompressible bytes) sent by runset's client
 * against curl PUTting an archive of the same size to the same route (each a
 * version the server lacks, so both are stored and checked in full). Budget:
 * within 2 × curl. Also printed: the whole `runset suites push` of such a
 * folder (Node's start, the CLI's modules, packing, hashing, asking, uploading).
 *
 * BENCH_ROUNDS (3): rounds of (a) and (c) (each (c) a fresh version); medians.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { newToken } from '../src/auth/keys.js';
import { packSuite } from '../src/suites/pack.js';
import { RunsetClient } from '../src/client/client.js';
import { CLI, tempDir } from '../test/helpers/server.js';
import { startServe } from './runset-serve.js';

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const key = newToken();
const root = tempDir('runset-bench-suites-');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** A suite folder: a command test printing when it started, and left-pad as its one dependency (lockfile made here, from the registry). */
function suiteFolder(name: string, marker: string): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'start.js'), `console.log('started ' + Date.now()); require('left-pad'); console.log(${JSON.stringify(marker)});\n`);
  writeFileSync(path.join(dir, 'runset.config.yaml'), 'tests:\n  - { name: start, type: command, run: [node, start.js] }\n');
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'bench-suite', version: '1.0.0', private: true, dependencies: { 'left-pad': '1.3.0' } }, null, 2));
  return dir;
}

async function call<T>(url: string, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(url + route, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Creates a set, waits for it to pass, answers createdAt → the time its test printed. */
async function createToStart(url: string, body: Record<string, string>): Promise<number> {
  const { testRunSetId: id } = await call<{ testRunSetId: string }>(url, 'POST', '/v0/test-run-sets', body);
  for (;;) {
    const s = await call<{ status: string; createdAt: string }>(url, 'GET', `/v0/test-run-sets/${id}`);
    if (s.status === 'FAIL') throw new Error(`set ${id} failed: ${JSON.stringify(await call(url, 'GET', `/v0/test-run-sets/${id}/test-runs`))}`);
    if (s.status === 'SUCCESS') {
      const { testRuns } = await call<{ testRuns: Array<{ output: string }> }>(url, 'GET', `/v0/test-run-sets/${id}/test-runs`);
      const started = Number(/started (\d+)/.exec(testRuns[0]?.output ?? '')?.[1]);
      return started - Date.parse(s.createdAt);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `runset suites push DIR`: the id it printed and its wall time. */
async function push(url: string, dir: string): Promise<{ id: string; ms: number }> {
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNSET_'))), RUNSET_URL: url, RUNSET_API_KEY: key };
  const started = performance.now();
  const { stdout } = await run(process.execPath, [CLI, 'suites', 'push', dir], { env });
  return { id: stdout.trim(), ms: performance.now() - started };
}

async function main(): Promise<void> {
  const own = suiteFolder('own', 'own');
  await run('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund'], { cwd: own });
  await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: own });
  writeFileSync(path.join(own, 'runset.config.yaml'), `environments:\n  bench: { allowSuiteUploads: true }\ntests:\n  - { name: start, type: command, run: [node, start.js] }\n`);
  const cache = path.join(root, 'cache');
  // An empty cache of its own (RUNSET_SUITE_CACHE is --suite-cache): (b) is cold whatever ran before.
  const server = await startServe(path.join(own, 'runset.config.yaml'), path.join(root, 'data'), key, 2, { RUNSET_SUITE_CACHE: cache });
  try {
    const version = async (marker: string) => {
      const dir = suiteFolder(`v-${marker}`, marker);
      cpSync(path.join(own, 'package-lock.json'), path.join(dir, 'package-lock.json'));
      return (await push(server.url, dir)).id;
    };
    await createToStart(server.url, { env: 'bench' }); // warm: the launcher, the first claim
    const cold = await createToStart(server.url, { env: 'bench', suite: await version('cold') });
    const ownMs: number[] = [];
    const cachedMs: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      ownMs.push(await createToStart(server.url, { env: 'bench' }));
      cachedMs.push(await createToStart(server.url, { env: 'bench', suite: await version(`cached-${i}`) }));
    }
    const a = median(ownMs);
    const c = median(cachedMs);
    console.log(`bench:suites: create → the test's first line (medians of ${ROUNDS}): (a) server's own suite ${a} ms; (b) new version, lockfile not cached ${cold} ms; (c) new version, lockfile cached ${c} ms`);
    console.log(`verdict: (c) − (a) = ${c - a} ms (budget 1500 ms)`);

    // Upload: the same size both ways (random bytes do not compress), each a version the server lacks.
    const tarball = async (marker: string) => {
      const dir = suiteFolder(`big-${marker}`, marker);
      writeFileSync(path.join(dir, 'data.bin'), randomBytes(10 * 1024 * 1024));
      const packStarted = performance.now();
      const packed = await packSuite(dir);
      return { dir, packed, packMs: performance.now() - packStarted };
    };
    const forCurl = await tarball('curl');
    const file = path.join(root, 'curl.tar.gz');
    writeFileSync(file, forCurl.packed.archive);
    const curlStarted = performance.now();
    await run('curl', ['-sf', '-X', 'PUT', '-H', `Authorization: Bearer ${key}`, '-H', 'Content-Type: application/gzip', '--data-binary', `@${file}`, `${server.url}/v0/suites/${forCurl.packed.id}`]);
    const curlMs = performance.now() - curlStarted;
    const forClient = await tarball('client');
    const client = new RunsetClient({ url: server.url, apiKey: key });
    const clientStarted = performance.now();
    await client.uploadSuiteVersion(forClient.packed.id, forClient.packed.archive);
    const clientMs = performance.now() - clientStarted;
    const whole = await tarball('push');
    const pushed = await push(server.url, whole.dir);
    const mb = (forCurl.packed.size / 1024 / 1024).toFixed(1);
    console.log(`upload of a ${mb} MB archive: runset's client ${Math.round(clientMs)} ms, curl ${Math.round(curlMs)} ms: ${(clientMs / curlMs).toFixed(2)} × (budget 2 ×)`);
    console.log(`the whole \`runset suites push\` of a ${mb} MB folder: ${Math.round(pushed.ms)} ms (node and the CLI's modules, packing ${Math.round(whole.packMs)} ms, hash, ask, upload): ${(pushed.ms / curlMs).toFixed(2)} × curl's upload alone`);
  } finally {
    server.proc.kill('SIGTERM');
  }
}

await main();
