/**
 * The workers registry seen from outside, on the real server (SQLite, one
 * process): GET /api/v0/workers, the SDK's listWorkers, `runset workers` (table
 * and --json), and members naming the worker that ran them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { RunsetClient } from '../../src/client/index.js';
import { api, assertNoLeakedServers, CLI, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';

interface Worker {
  id: string;
  host: string;
  pid: number;
  slots: number;
  held: number;
  startedAt: string;
  heartbeatAt: string;
  running: Array<{ setId: string; runId: string; name: string; type: string; startedAt: string | null }>;
}

const gate = path.join(tempDir('runset-gate-'), 'open');
const CONFIG = `
environments:
  staging:
    variables:
      GATE: ${gate}
tests:
  - name: held open
    type: command
    run: [node, -e, "const t = setInterval(() => { if (require('fs').existsSync(process.env.GATE)) clearInterval(t) }, 20)"]
  - name: quick
    type: command
    run: [node, -e, "0"]
`;

function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNSET_')));
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

describe('workers registry over HTTP, SDK and CLI', () => {
  let server: RunningServer;
  let setId: string;
  let worker: Worker;

  before(async () => {
    server = await startRunset({ config: CONFIG, args: ['--workers', '3'] });
    const res = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' } });
    assert.equal(res.status, 200, res.text);
    setId = res.body.testRunSetId as string;
    // Until the gate opens, "held open" runs; wait until "quick" has ended too,
    // so every test below sees one busy slot of three.
    for (;;) {
      const list = await api<{ workers: Worker[] }>(server, 'GET', '/v0/workers');
      const members = await api<{ testRuns: Array<{ name: string; status: string }> }>(server, 'GET', `/v0/test-run-sets/${setId}/test-runs`);
      const quickEnded = members.body.testRuns.some((m) => m.name === 'quick' && m.status === 'SUCCESS');
      const running = list.body.workers[0]?.running ?? [];
      if (quickEnded && running.length === 1 && running[0]!.name === 'held open') {
        worker = list.body.workers[0]!;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  after(async () => {
    writeFileSync(gate, '');
    assert.equal(await server.stop(), 0);
    assertNoLeakedServers();
  });

  test('GET /v0/workers lists the serve process, its slots and the member it runs', async () => {
    const res = await api<{ workers: Worker[]; staleAfterMs: number }>(server, 'GET', '/v0/workers');
    assert.equal(res.status, 200);
    assert.equal(res.body.staleAfterMs, 3000, 'three heartbeats of the default 1 s poll');
    assert.equal(res.body.workers.length, 1);
    assert.equal(worker.pid, server.proc.pid);
    assert.equal(worker.slots, 3);
    assert.match(worker.id, new RegExp(`^${worker.host}/${worker.pid}/`));
    const held = worker.running.find((r) => r.name === 'held open')!;
    assert.equal(held.setId, setId);
    assert.equal(held.type, 'command');
    assert.ok(held.startedAt && Date.parse(held.startedAt) <= Date.now());
    assert.ok(Date.parse(worker.heartbeatAt) >= Date.parse(worker.startedAt));

    const anonymous = await api(server, 'GET', '/v0/workers', { auth: null });
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get('content-type') ?? '', /problem\+json/);
  });

  test('the SDK lists the same workers', async () => {
    const client = new RunsetClient({ url: server.url, apiKey: server.apiKey });
    const workers = await client.listWorkers();
    assert.deepEqual(workers.map((w) => [w.id, w.slots]), [[worker.id, 3]]);
    assert.ok(workers[0]!.running.some((r) => r.runId && r.name === 'held open'));
  });

  test('`runset workers` prints a table, and --json the list; without RUNSET_URL it says what to set', async () => {
    const env = { RUNSET_URL: server.url, RUNSET_API_KEY: server.apiKey };
    const table = await runCli(['workers'], env);
    assert.equal(table.code, 0, table.err);
    const [header, row] = table.out.trimEnd().split('\n');
    assert.match(header!, /^WORKER\s+HOST\s+PID\s+BUSY\s+HELD\s+UP\s+SEEN\s+RUNNING$/);
    assert.ok(row!.startsWith(worker.id), row);
    assert.match(row!, /\s1\/3\s/);
    assert.match(row!, /held open$/);
    assert.ok(!table.out.includes(server.apiKey) && !table.err.includes(server.apiKey));

    const json = await runCli(['workers', '--json'], env);
    assert.equal(json.code, 0, json.err);
    assert.deepEqual((JSON.parse(json.out) as Worker[]).map((w) => w.id), [worker.id]);

    const unset = await runCli(['workers'], { RUNSET_API_KEY: server.apiKey });
    assert.equal(unset.code, 3);
    assert.match(unset.err, /RUNSET_URL is not set/);
    const wrongKey = await runCli(['workers'], { ...env, RUNSET_API_KEY: `rs_${'x'.repeat(43)}` });
    assert.equal(wrongKey.code, 3);
    assert.match(wrongKey.err, /401/);
  });

  test('members name the worker that ran them; the worker is idle once the set ends', async () => {
    writeFileSync(gate, '');
    await waitForSet(server, setId);
    const members = await api<{ testRuns: Array<{ name: string; workerId: string | null }> }>(server, 'GET', `/v0/test-run-sets/${setId}/test-runs`);
    assert.deepEqual(members.body.testRuns.map((m) => [m.name, m.workerId]), [
      ['held open', worker.id],
      ['quick', worker.id],
    ]);
    const after = await api<{ workers: Worker[] }>(server, 'GET', '/v0/workers');
    assert.deepEqual(after.body.workers[0]!.running, []);
  });

  test('the OpenAPI document describes GET /v0/workers behind the key check', async () => {
    const doc = await api<{ paths: Record<string, Record<string, { operationId: string; security: unknown[] }>> }>(server, 'GET', '/openapi.json', { auth: null });
    const op = doc.body.paths['/v0/workers']?.get;
    assert.equal(op?.operationId, 'listWorkers');
    assert.ok(op.security.length > 0);
  });
});
