/**
 * Queue metrics over real HTTP (SQLite, one serve process with workers): an
 * environment with maxConcurrentSets 1 and three sets created at once shows
 * runset_sets_queued{env} at 2 while the first runs, no series once none
 * waits; runset_set_wait_seconds{env} observes each set once when it ends,
 * from its creation to its first start: the queued sets' waits include the
 * runs ahead of them, and a set cancelled while queued waited until it ended.
 */
import { after, afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertNoLeakedServers, startRunset, waitForSet } from '../helpers/server.js';
import { metricsUrlIn, scrapeUntil, valueOf } from '../helpers/prometheus.js';

afterEach(assertNoLeakedServers);
after(assertNoLeakedServers);

const RUN_S = 0.5;

const CONFIG = `
environments:
  shared: { maxConcurrentSets: 1 }
  free:
tests:
  - { name: nap, type: command, run: [sh, -c, 'sleep ${RUN_S}'] }
`;

test('queued sets by environment, and each set\'s wait from creation to its first start', { timeout: 60_000 }, async () => {
  // More slots than the limit lets run: the queue, not the fleet, holds sets back.
  const server = await startRunset({ config: CONFIG, args: ['--metrics-port', '0', '--workers', '3'] });
  const metricsUrl = metricsUrlIn(server.logs());
  const create = async (env: string) => {
    const res = await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env } });
    assert.equal(res.status, 200, res.text);
    return res.body.testRunSetId;
  };

  const [first, second, third, cancelled] = [await create('shared'), await create('shared'), await create('shared'), await create('shared')];
  const free = await create('free');
  const queued = await scrapeUntil(metricsUrl, (s) => valueOf(s, 'runset_sets_queued', { env: 'shared' }) === 3);
  assert.equal(queued.types.get('runset_sets_queued'), 'gauge');
  assert.equal(valueOf(queued, 'runset_sets_queued', { env: 'free' }), undefined, 'no limit: never queued');

  assert.equal((await api(server, 'POST', `/v0/test-run-sets/${cancelled}/cancel`)).status, 200);
  for (const id of [first, second, third, free]) assert.equal((await waitForSet(server, id)).status, 'SUCCESS');

  const s = await scrapeUntil(metricsUrl, (x) => valueOf(x, 'runset_set_wait_seconds_count', { env: 'shared' }) === 4 && valueOf(x, 'runset_set_wait_seconds_count', { env: 'free' }) === 1);
  assert.equal(s.types.get('runset_set_wait_seconds'), 'histogram');
  assert.equal(s.samples.filter((x) => x.name === 'runset_sets_queued').length, 0, 'none queued: no series');
  // The second waited for the first's run, the third for two runs: at least 3 × RUN_S between them (the store's own times).
  const sum = valueOf(s, 'runset_set_wait_seconds_sum', { env: 'shared' })!;
  assert.ok(sum >= 3 * RUN_S, `the queued sets' waits include the runs ahead of them: ${sum} s`);
  assert.equal(valueOf(s, 'runset_set_wait_seconds_bucket', { env: 'shared', le: '+Inf' }), 4, 'each set observed once, the cancelled one too');
  assert.equal(await server.stop(), 0);
});
