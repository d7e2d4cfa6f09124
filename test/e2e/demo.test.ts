/**
 * `npm start` is `runset demo`: the demo shop, runset serving the demo suite
 * against it, and a banner with a key and copy-paste curl lines. This runs the
 * banner's own lines in a shell, as a reader would paste them, and follows both
 * environments to their end: `demo` passes, `broken` fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { CLI, REPO_ROOT, tempDir } from '../helpers/server.js';

interface Status {
  status: string;
  progress: { counts: { WAITING: number; RUNNING: number; SUCCESS: number; FAIL: number } };
}

test('npm start: the demo banner\'s curl lines create a set; demo ends SUCCESS, broken ends FAIL', { timeout: 240_000 }, async (t) => {
  const proc = spawn(process.execPath, [CLI, 'demo', '--port', '0', '--data-dir', path.join(tempDir('runset-demo-'), 'data')], {
    cwd: REPO_ROOT,
    env: { ...process.env, RUNSET_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(async () => {
    if (proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await exited; // the shop's port (4010) is free again before the next test file
  });
  let output = '';
  proc.stdout.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 60_000;
  while (!output.includes('Stop with Ctrl-C')) {
    assert.ok(Date.now() < deadline && proc.exitCode === null, `the demo did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  const url = /export RUNSET_URL=(\S+)/.exec(output)?.[1];
  const key = /export RUNSET_API_KEY=(rs_\S+)/.exec(output)?.[1];
  assert.ok(url && key, `the banner names the API and a key:\n${output}`);
  const lines = output.split('\n');
  const create = lines.slice(lines.findIndex((l) => l.includes('ID=$(curl')), lines.findIndex((l) => l.includes('ID=$(curl')) + 2).join('\n');
  const status = lines.find((l) => l.includes('curl -s "$RUNSET_URL/v0/test-run-sets/$ID"'))!;

  const run = async (env: string): Promise<Status> => {
    // The banner's lines, pasted into a shell (for `broken`, with the env swapped).
    const script = `${create.replace('"env":"demo"', `"env":"${env}"`)}\necho "$ID"`;
    const id = execFileSync('sh', ['-c', script], { env: { ...process.env, RUNSET_URL: url, RUNSET_API_KEY: key }, encoding: 'utf8' }).trim();
    assert.match(id, /^[0-9a-f-]{36}$/, `the create line printed an id: ${id}`);
    for (;;) {
      const body = execFileSync('sh', ['-c', status], { env: { ...process.env, RUNSET_URL: url, RUNSET_API_KEY: key, ID: id }, encoding: 'utf8' });
      const set = JSON.parse(body) as Status;
      if (set.status === 'SUCCESS' || set.status === 'FAIL') return set;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  const demo = await run('demo');
  assert.equal(demo.status, 'SUCCESS', JSON.stringify(demo));
  assert.ok(demo.progress.counts.SUCCESS >= 4, 'http, command (and browser) tests all ran');
  const broken = await run('broken');
  assert.equal(broken.status, 'FAIL', JSON.stringify(broken));
  assert.ok(broken.progress.counts.FAIL > 0);
  assert.ok(!output.includes('demo-password'), 'the shop password (a secret) is never printed');
});
