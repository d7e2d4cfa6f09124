/** Server-side limits: sets per key per minute. */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertNoLeakedServers, startRunset } from '../helpers/server.js';

after(() => assertNoLeakedServers());

test('a key over its sets-per-minute limit gets 429 with Retry-After; other requests still work', async () => {
  const server = await startRunset({
    config: 'environments:\n  local: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n',
    args: ['--sets-per-minute', '2'],
  });
  try {
    const create = () => api(server, 'POST', '/v0/test-run-sets', { body: { env: 'local' } });
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
