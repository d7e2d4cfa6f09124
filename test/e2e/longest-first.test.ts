/**
 * Longest first, by history, on the embedded store (one process): a set's
 * members carry their expected duration, the median of their recent successful
 * runs; with one slot they start longest expected first, whatever the config's order.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertNoLeakedServers, startRunset, waitForSet } from '../helpers/server.js';

after(() => assertNoLeakedServers());

interface Member {
  name: string;
  startedAt: string;
  expectedMs: number;
  durationMs: number;
  workerId: string;
}

test('the second set runs its members longest expected first, from the first set’s durations', async () => {
  const server = await startRunset({
    args: ['--workers', '1'],
    config: `
environments:
  local: { variables: {} }
tests:
  - { name: quick, type: command, run: [sleep, "0.05"] }
  - { name: slow, type: command, run: [sleep, "0.6"] }
  - { name: medium, type: command, run: [sleep, "0.3"] }
  - { name: broken, type: command, run: [sh, -c, "sleep 0.9; exit 1"] }
`,
  });
  try {
    const runSet = async () => {
      const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'local' } });
      const id = created.body.testRunSetId as string;
      await waitForSet(server, id, 20_000);
      const members = await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`);
      return members.body.testRuns;
    };
    const startOrder = (members: Member[]) => [...members].sort((a, b) => a.startedAt.localeCompare(b.startedAt)).map((m) => m.name);

    const first = await runSet();
    assert.deepEqual(first.map((m) => m.expectedMs), [1000, 1000, 1000, 1000], 'no history: all alike');
    assert.deepEqual(startOrder(first), ['quick', 'slow', 'medium', 'broken'], 'alike: the config order');
    assert.ok(first.every((m) => m.workerId === first[0]!.workerId), 'one worker ran them all');

    // Successful durations reach the history within about a second of their end.
    let second: Member[] = [];
    for (const until = Date.now() + 10_000; Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 300));
      second = await runSet();
      if (second.every((m) => m.name === 'broken' || m.expectedMs !== 1000)) break;
    }
    const expected = new Map(second.map((m) => [m.name, m.expectedMs]));
    const took = new Map(first.map((m) => [m.name, m.durationMs]));
    for (const name of ['quick', 'slow', 'medium']) {
      // The median of the runs so far (the loop may have run more than one): near the first run's, on a loaded machine too.
      const tolerance = Math.max(250, took.get(name)! * 0.4);
      assert.ok(Math.abs(expected.get(name)! - took.get(name)!) < tolerance, `${name}: expected ${expected.get(name)} ms after a run of ${took.get(name)} ms`);
    }
    // A failure is no duration sample: "broken" counts as the set's median (of the others' own medians).
    // Derived from the figures rather than assumed: on a loaded machine even `sleep 0.05` can outlast `sleep 0.3`.
    const others = ['quick', 'slow', 'medium'].map((name) => expected.get(name)!).sort((a, b) => a - b);
    assert.equal(expected.get('broken'), others[1], 'no history of its own: the median of the others');
    // Longest expected first; equal ones keep the config order.
    const configOrder = ['quick', 'slow', 'medium', 'broken'];
    const longestFirst = [...configOrder].sort((a, b) => expected.get(b)! - expected.get(a)! || configOrder.indexOf(a) - configOrder.indexOf(b));
    assert.deepEqual(startOrder(second), longestFirst, 'longest expected first');
    assert.deepEqual(second.map((m) => m.name), ['quick', 'slow', 'medium', 'broken'], 'listed in the config order still');
  } finally {
    await server.stop();
  }
});
