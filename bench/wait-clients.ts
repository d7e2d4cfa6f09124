/**
 * The part of bench:wait where a set's status changes between two reads: six
 * members ending 0.5 s apart (1.0 s … 3.5 s), so a client that misreads an
 * early answer as "this server does not wait" sleeps its whole interval and
 * sees the end late. Each real client follows its own sets to the end:
 *
 * - the SDK's waitForTestRunSet (as the SDK's users call it);
 * - `runset trigger --wait --json` (the CLI a pipeline runs), spawned;
 * - the GitHub Action (`node action/main.mjs` with the runner's INPUT_*), spawned.
 *
 * Delay = the client seeing the end (SDK: its final progress callback;
 * CLI and Action: the process's exit) − the set's endedAt. Every client is
 * left at its default interval (10 s), so one missed change costs seconds.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunsetClient } from '../src/client/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
const ACTION = path.join(ROOT, 'action', 'main.mjs');
const ROUNDS = Number(process.env.BENCH_CLIENT_SETS ?? 8);

/** The staged environment's six members, for the bench's config. */
export const STAGED_TESTS = [1, 1.5, 2, 2.5, 3, 3.5]
  .map((s, i) => `  - { name: staged-${i + 1}, type: command, run: [sleep, "${s}"], environments: [staged] }\n`)
  .join('');

interface Server {
  url: string;
  apiKey: string;
}

type Way = (server: Server) => Promise<{ id: string; seenAt: number }>;

const sdk: Way = async (server) => {
  const client = new RunsetClient({ url: server.url, apiKey: server.apiKey });
  const { testRunSetId: id } = await client.createTestRunSet({ env: 'staged' });
  let seenAt = 0;
  await client.waitForTestRunSet(id, { onProgress: (s) => (s.status === 'SUCCESS' || s.status === 'FAIL' ? (seenAt = Date.now()) : undefined) });
  return { id, seenAt };
};

/** Spawns a client process; resolves at its exit with what it printed. */
function exited(args: string[], env: Record<string, string>): Promise<{ stdout: string; at: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve({ stdout, at: Date.now() }) : reject(new Error(`${args.join(' ')} exited ${code}`))));
  });
}

const cli: Way = async (server) => {
  const { stdout, at } = await exited([CLI, 'trigger', '--env', 'staged', '--wait', '--json'], { RUNSET_URL: server.url, RUNSET_API_KEY: server.apiKey });
  return { id: (JSON.parse(stdout) as { id: string }).id, seenAt: at };
};

const action: Way = async (server) => {
  const state = path.join(mkdtempSync(path.join(tmpdir(), 'runset-bench-action-')), 'state');
  writeFileSync(state, '');
  const { at } = await exited([ACTION], { 'INPUT_URL': server.url, 'INPUT_API-KEY': server.apiKey, INPUT_ENV: 'staged', GITHUB_STATE: state });
  const id = /^set-id<<(.+)\n(.+)\n/m.exec(readFileSync(state, 'utf8'))?.[2] ?? /set-id=(.+)/.exec(readFileSync(state, 'utf8'))?.[1];
  if (!id) throw new Error('the Action saved no set id');
  return { id, seenAt: at };
};

const WAYS: ReadonlyArray<[string, Way]> = [['SDK', sdk], ['trigger --wait', cli], ['GitHub Action', action]];

export async function followEveryClient(store: string, server: Server): Promise<void> {
  const client = new RunsetClient({ url: server.url, apiKey: server.apiKey });
  for (const [name, way] of WAYS) {
    const delays: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const { id, seenAt } = await way(server);
      const set = await client.getTestRunSet(id);
      if (set.status !== 'SUCCESS' || !set.endedAt) throw new Error(`${name}: set ${id} ended ${set.status}`);
      delays.push(seenAt - Date.parse(set.endedAt));
    }
    delays.sort((a, b) => a - b);
    const median = delays[delays.length >> 1]!;
    const max = delays.at(-1)!;
    const verdict = median < 100 && max < 1000 ? 'within budget' : 'OVER BUDGET';
    console.log(`${store.padEnd(10)} ${name.padEnd(16)} 6 members ending 0.5 s apart, ${ROUNDS} sets: end → client saw it median ${median} ms, max ${max} ms (budget < 100 ms, < 1 s): ${verdict}`);
  }
}
