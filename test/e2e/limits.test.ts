/** Server-side limits: sets per key per minute. */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { api, assertNoLeakedServers, startRunset } from '../helpers/server.js';

after(() => assertNoLeakedServers());

test('a key over its sets-per-minute limit gets 429 with Retry-After; refused creates spend nothing; other requests still work', async () => {
  const server = await startRunset({
    config: 'environments:\n  local: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n',
    args: ['--sets-per-minute', '2'],
  });
  try {
    const create = () => api(server, 'POST', '/v0/test-run-sets', { body: { env: 'local' } });
    for (let i = 0; i < 3; i++) {
      const refused = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'nope' } });
      assert.equal((refused.body as { code: string }).code, 'unknown_environment', 'a refused create spends no budget');
    }
    const first = await create();
    assert.equal(first.status, 200);
    assert.equal((await create()).status, 200);
    const third = await create();
    assert.equal(third.status, 429);
    assert.equal((third.body as { code: string }).code, 'rate_limited');
    assert.match((third.body as { detail: string }).detail, /2 sets per minute/);
    const retryAfter = Number(third.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    const rerun = await api(server, 'POST', `/v0/test-run-sets/${first.body.testRunSetId as string}/rerun`, { body: {} });
    assert.equal(rerun.status, 429, '"run again" spends the same budget as create');
    assert.equal((rerun.body as { code: string }).code, 'rate_limited');
    const status = await api(server, 'GET', `/v0/test-run-sets/${first.body.testRunSetId as string}`);
    assert.equal(status.status, 200, 'polling is not limited');
  } finally {
    await server.stop();
  }
});

test('a create whose selection holds a pattern spends the budget before the pattern runs, even when refused', async () => {
  const server = await startRunset({
    config: 'environments:\n  local: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n',
    args: ['--sets-per-minute', '2'],
  });
  try {
    const patterned = (grep: string) => api(server, 'POST', '/v0/test-run-sets', { body: { env: 'local', select: { grep } } });
    const unmatched = await patterned('^nothing-is-named-so$');
    assert.equal((unmatched.body as { code: string }).code, 'no_tests_selected');
    const matching = await patterned('^ok$');
    assert.equal(matching.status, 200, 'the second request is within the budget');
    const third = await patterned('ok');
    assert.equal(third.status, 429, 'the refused patterned request spent its budget');
    assert.equal((third.body as { code: string }).code, 'rate_limited');
  } finally {
    await server.stop();
  }
});

test('an Idempotency-Key replay gets its set back without spending the budget, even after the config changed', async () => {
  const server = await startRunset({
    config: 'environments:\n  local: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n',
    args: ['--sets-per-minute', '1'],
  });
  try {
    const headers = { 'idempotency-key': 'deploy-42' };
    const first = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'local' }, headers });
    assert.equal(first.status, 200);
    // The budget is spent, and the environment is gone from the config.
    writeFileSync(server.configPath, 'environments:\n  other: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n');
    server.proc.kill('SIGHUP');
    const envs = async () => (await api<{ environments: Array<{ name: string }> }>(server, 'GET', '/v0/environments')).body.environments.map((e) => e.name);
    await until(async () => (await envs()).join() === 'other');
    const replay = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'local' }, headers });
    assert.equal(replay.status, 200, replay.text);
    assert.equal(replay.body.testRunSetId, first.body.testRunSetId);
    const conflict = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'other' }, headers });
    assert.equal(conflict.status, 422, 'the same key with another body is still refused');
  } finally {
    await server.stop();
  }
});

async function until(check: () => Promise<boolean>, withinMs = 20_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, 'the reload did not happen in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
