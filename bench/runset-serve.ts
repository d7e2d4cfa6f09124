/**
 * The runset side of the Playwright benches (bench:playwright and its webServer
 * case): one `runset serve` on a data dir of its own, and a round timed from the
 * create to the poll that sees the set end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI } from '../test/helpers/server.js';

/** Starts `runset serve` on port 0 with `workers` slots; resolves with its API address once it says it listens. */
export function startServe(configPath: string, dataDir: string, key: string, workers: number, env: Record<string, string> = {}): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--config', configPath, '--data-dir', dataDir, '--workers', String(workers)], {
    env: { ...process.env, RUNSET_BOOTSTRAP_KEY: key, RUNSET_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /API at (http:\/\/\S+\/api)/.exec(out);
      if (m) resolve({ proc, url: m[1]! });
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`runset exited ${code}: ${out}`)));
  });
}

/** Creates a set of `env` and polls every 100 ms until it ends; the ms from create to end. The set must pass. */
export async function runsetRound(url: string, key: string, env = 'bench'): Promise<number> {
  const auth = { authorization: `Bearer ${key}` };
  const started = performance.now();
  const created = (await (await fetch(`${url}/v0/test-run-sets`, {
    method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ env }),
  })).json()) as { testRunSetId: string };
  for (;;) {
    if (performance.now() - started > 10 * 60_000) throw new Error(`the runset set did not end within 10 min: ${created.testRunSetId}`);
    const status = (await (await fetch(`${url}/v0/test-run-sets/${created.testRunSetId}`, { headers: auth })).json()) as { status: string };
    if (status.status === 'SUCCESS') return performance.now() - started;
    if (status.status === 'FAIL') throw new Error(`the runset set failed: ${created.testRunSetId}`);
    await new Promise((resolve) => setTimeout(resolve, 100)); // a CI client polls far less often; this adds ≤ 0.1 s
  }
}
