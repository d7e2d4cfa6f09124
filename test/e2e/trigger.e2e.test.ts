/**
 * `runset trigger` against the real server (CLI child processes, real SQLite):
 * a mixed set ends in exit 1 with a JUnit file naming the failed test, and an
 * unknown environment is a final error (exit 3) that lists the known ones.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { convert } from 'xmlbuilder2';
import { assertNoLeakedServers, CLI, startRunset, tempDir, type RunningServer } from '../helpers/server.js';
import { MIXED_CONFIG, SECRET_VALUE } from './fixtures.js';

after(() => assertNoLeakedServers());

function trigger(server: RunningServer, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNSET_') && !k.startsWith('GITHUB_')));
  const child = spawn(process.execPath, [CLI, 'trigger', ...args], {
    env: { ...env, RUNSET_URL: server.url, RUNSET_API_KEY: server.apiKey },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    }),
  );
}

describe('runset trigger against the real server', () => {
  let server: RunningServer;
  before(async () => {
    server = await startRunset({ config: MIXED_CONFIG, env: { E2E_SECRET_TOKEN: SECRET_VALUE }, args: ['--workers', '2'] });
  });
  after(async () => {
    await server.stop();
  });

  test('a mixed set: exit 1, and a JUnit file naming the failed test', async () => {
    const junit = path.join(tempDir(), 'reports', 'junit.xml');
    const r = await trigger(server, ['--env', 'staging', '--wait', '--interval', '100ms', '--timeout', '20s', '--junit', junit, '--json']);
    assert.equal(r.code, 1, r.err);
    assert.equal((JSON.parse(r.out) as { status: string }).status, 'FAIL');
    assert.match(r.err, /✗ prints secret then fails/);

    const xml = readFileSync(junit, 'utf8');
    const doc = convert(xml, { format: 'object' }) as { testsuites: { testsuite: { testcase: Array<Record<string, unknown>> } } };
    const cases = doc.testsuites.testsuite.testcase;
    assert.deepEqual(cases.map((c) => c['@name']).sort(), ['passes', 'prints secret then fails']);
    const failed = cases.find((c) => c['@name'] === 'prints secret then fails');
    assert.ok(failed?.failure, 'the failed test has a <failure>');
    assert.equal(cases.find((c) => c['@name'] === 'passes')?.failure, undefined);
    for (const text of [xml, r.out, r.err]) {
      assert.ok(!text.includes(server.apiKey), 'the key leaked');
      assert.ok(!text.includes(SECRET_VALUE), 'the secret leaked');
    }
  });

  test('an unknown environment: exit 3 with the server reason, nothing on stdout', async () => {
    const r = await trigger(server, ['--env', 'nope', '--wait', '--interval', '100ms']);
    assert.equal(r.code, 3, r.err);
    assert.equal(r.out, '');
    assert.match(r.err, /staging/, 'the reason lists the known environments');
  });
});
