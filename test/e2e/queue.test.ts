/**
 * Queues per environment through the real server (SQLite) and the real CLI:
 * with `maxConcurrentSets: 1`, later sets wait WAITING with their members
 * unclaimed; their details say how many sets are ahead and which hold the
 * place; `runset trigger --wait` prints "queued: N sets ahead" as the queue
 * moves; cancelling a queued set takes it out of the queue.
 */
import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, CLI, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';

after(() => assertNoLeakedServers());

interface Details {
  queue: { ahead: number; limit: number; holders: string[] } | null;
}

async function until(what: string, check: () => boolean | Promise<boolean>, withinMs = 15_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${withinMs}ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A server whose environment `shared` runs one set at a time, of one test that runs until the file `gate` exists. */
async function gatedServer(t: TestContext, extra: string): Promise<{ gate: string; server: RunningServer }> {
  const gate = path.join(tempDir('runset-queue-'), 'open');
  const server = await startRunset({
    config: `
environments:
  shared:
    maxConcurrentSets: 1
    ${extra}
    variables: { GATE: "${gate}" }
tests:
  - { name: waits for the gate, type: command, run: [sh, -c, 'while [ ! -e "$GATE" ]; do sleep 0.05; done'], timeoutSeconds: 60 }
`,
    args: ['--workers', '2'],
  });
  t.after(() => server.stop());
  return { gate, server };
}

test('maxConcurrentSets 1: later sets queue in order, trigger --wait says how many are ahead, a cancelled queued set leaves the queue', { timeout: 60_000 }, async (t) => {
  const { gate, server } = await gatedServer(t, '');
  const create = async () => (await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env: 'shared' } })).body.testRunSetId;
  const details = async (id: string) => (await api<Details>(server, 'GET', `/v0/test-run-sets/${id}/details`)).body;
  const status = async (id: string) => (await api<{ status: string }>(server, 'GET', `/v0/test-run-sets/${id}`)).body.status;

  const first = await create();
  const second = await create();
  await until('the first set running', async () => (await status(first)) === 'RUNNING');
  assert.equal((await details(first)).queue, null);
  assert.deepEqual((await details(second)).queue, { ahead: 1, limit: 1, holders: [first] });

  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNSET_') && !k.startsWith('GITHUB_')));
  const child = spawn(process.execPath, [CLI, 'trigger', '--env', 'shared', '--wait', '--interval', '100ms', '--timeout', '40s', '--no-ci-labels'], {
    env: { ...env, RUNSET_URL: server.url, RUNSET_API_KEY: server.apiKey },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  t.after(() => child.kill('SIGKILL'));

  await until('"queued: 2 sets ahead"', () => err.includes('runset: queued: 2 sets ahead (the environment runs 1 set at a time)'));
  assert.equal(await status(second), 'WAITING');
  assert.deepEqual(
    (await api<{ testRuns: { startedAt: string | null; workerId: string | null }[] }>(server, 'GET', `/v0/test-run-sets/${second}/test-runs`)).body.testRuns.map((r) => [r.startedAt, r.workerId]),
    [[null, null]],
    'the queued set\'s member was never claimed',
  );

  // Cancelling the queued set takes it out of the queue: the triggered set is next.
  assert.equal((await api(server, 'POST', `/v0/test-run-sets/${second}/cancel`)).status, 200);
  await until('"queued: 1 set ahead"', () => err.includes('runset: queued: 1 set ahead'));
  const cancelled = await api<{ testRuns: { status: string; error: string; startedAt: string | null }[] }>(server, 'GET', `/v0/test-run-sets/${second}/test-runs`);
  assert.deepEqual(cancelled.body.testRuns.map((r) => [r.status, r.error, r.startedAt]), [['FAIL', 'cancelled', null]]);

  writeFileSync(gate, '');
  assert.equal(await exited, 0, err);
  assert.match(err, /queued: 2 sets ahead[\s\S]*queued: 1 set ahead[\s\S]*SUCCESS/, 'the queue lines come before the end');
  assert.equal((await waitForSet(server, first)).status, 'SUCCESS');
});

test('setTimeout: a running set and a queued one end FAIL at their deadline; timeoutSeconds may only shorten it', { timeout: 60_000 }, async (t) => {
  const { server } = await gatedServer(t, 'setTimeout: 3s');
  const create = (body: Record<string, unknown>) => api<{ testRunSetId: string; code?: string; detail?: string }>(server, 'POST', '/v0/test-run-sets', { body: { env: 'shared', ...body } });

  const tooLong = await create({ timeoutSeconds: 4 });
  assert.equal(tooLong.status, 400);
  assert.equal(tooLong.body.code, 'set_timeout_too_long');
  assert.match(tooLong.body.detail ?? '', /timeoutSeconds 4 is over environment "shared"'s setTimeout of 3s \(3 seconds\); send at most 3/);

  const running = (await create({})).body.testRunSetId;
  const queued = (await create({ timeoutSeconds: 2 })).body.testRunSetId;
  const started = Date.now();
  const [first, second] = await Promise.all([waitForSet(server, running, 15_000), waitForSet(server, queued, 15_000)]);
  assert.equal(first.status, 'FAIL');
  assert.equal(second.status, 'FAIL');
  assert.ok(Date.now() - started >= 1500, 'not before the deadline');
  const errors = async (id: string) => (await api<{ testRuns: { error: string; startedAt: string | null }[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
  assert.deepEqual((await errors(running)).map((r) => r.error), ['set timeout 3s reached']);
  assert.deepEqual((await errors(queued)).map((r) => [r.error, r.startedAt]), [['set timeout 2s reached', null]], 'the queued set never ran');
});

test('concurrencyGroup: a new set cancels the older unfinished sets of its group and environment, and only those', { timeout: 60_000 }, async (t) => {
  const { gate, server } = await gatedServer(t, 'maxFailures: 100');
  const create = async (body: Record<string, unknown>) => (await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env: 'shared', ...body } })).body.testRunSetId;
  const status = async (id: string) => (await api<{ status: string }>(server, 'GET', `/v0/test-run-sets/${id}`)).body.status;

  const running = await create({ concurrencyGroup: 'pr-42' });
  await until('the first set running', async () => (await status(running)) === 'RUNNING');
  const queued = await create({ concurrencyGroup: 'pr-42' });
  const otherGroup = await create({ concurrencyGroup: 'pr-43' });
  const newest = await create({ concurrencyGroup: 'pr-42' });

  // Each new set of pr-42 superseded the one before it: the running one went when the queued one came.
  for (const [id, by] of [[running, queued], [queued, newest]] as const) {
    assert.equal((await waitForSet(server, id, 10_000)).status, 'FAIL');
    const runs = (await api<{ testRuns: { error: string }[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
    assert.deepEqual(runs.map((r) => r.error), [`superseded by ${by}`]);
    const details = (await api<{ cancellation: { error: string; byKeyId: string | null } }>(server, 'GET', `/v0/test-run-sets/${id}/details`)).body;
    assert.deepEqual([details.cancellation.error, details.cancellation.byKeyId], [`superseded by ${by}`, null]);
  }
  // The place the running set held goes to the next in the queue: the other group's set, then the newest.
  await until('the other group\'s set running', async () => (await status(otherGroup)) === 'RUNNING');
  assert.deepEqual((await api<Details>(server, 'GET', `/v0/test-run-sets/${newest}/details`)).body.queue, { ahead: 1, limit: 1, holders: [otherGroup] });
  writeFileSync(gate, '');
  assert.equal((await waitForSet(server, otherGroup)).status, 'SUCCESS');
  assert.equal((await waitForSet(server, newest)).status, 'SUCCESS');
});
