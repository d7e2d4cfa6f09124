/**
 * Queues per environment across processes on real PostgreSQL: two API processes
 * (`runset serve --no-workers`) take 20 creates at once, two worker processes
 * run them, and the environment's maxConcurrentSets holds at every moment, read
 * afterwards from the members' own start and end times. Needs
 * RUNSET_TEST_DATABASE_URL; skips, saying so, without it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { tempDir } from '../helpers/server.js';
import { fleetOnFreshSchema, NO_DATABASE, query, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { createSet, listMembers, waitForSets, type Member } from '../helpers/scale.js';

const LIMIT = 2;

const CONFIG = `
environments:
  shared: { maxConcurrentSets: ${LIMIT} }
tests:
  - { name: first, type: command, run: [sh, -c, 'sleep 0.2'] }
  - { name: second, type: command, run: [sh, -c, 'sleep 0.2'] }
  - { name: third, type: command, run: [sh, -c, 'sleep 0.1'] }
`;

/** How far two transactions' now() stamps may disagree with their commit order (see below). */
const STAMP_SKEW_MS = 25;

/** A set's running span, from its members: first start to last end (ISO strings compare as times). */
function spanOf(members: readonly Member[]): { start: string; end: string } {
  const starts = members.map((m) => m.startedAt).filter((s): s is string => s !== null);
  const ends = members.map((m) => m.endedAt).filter((s): s is string => s !== null);
  assert.equal(ends.length, members.length, 'every member ended');
  return { start: starts.sort()[0]!, end: ends.sort().at(-1)! };
}

test(`20 concurrent creates on two API processes: never more than ${LIMIT} sets running, started in creation order`, { skip: TEST_DATABASE_URL ? false : NO_DATABASE, timeout: 120_000 }, async (t) => {
  const dir = tempDir('runset-queue-');
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, CONFIG);
  const { fleet, schema } = fleetOnFreshSchema(t, 'runset_queue', configPath, dir);
  // One after the other: the first makes the secret key the second reads.
  const one = await fleet.api();
  const two = await fleet.api();
  // More slots than the limit lets run: a breach would have room to happen.
  const workers = await Promise.all([fleet.worker(4, { args: ['--poll', '200ms'] }), fleet.worker(4, { args: ['--poll', '200ms'] })]);

  const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => createSet(i % 2 === 0 ? one : two, 'shared')));
  await waitForSets(one, ids, 90_000);

  // Creation order is the queue's: the order the store numbered them in.
  const order = (await query<{ id: string }>(TEST_DATABASE_URL!, `SELECT id FROM "${schema}".test_run_sets ORDER BY queue_seq`)).map((r) => r.id);
  assert.deepEqual([...order].sort(), [...ids].sort());
  const spans = await Promise.all(order.map(async (id) => ({ id, ...spanOf(await listMembers(one, id)) })));

  // The most sets running at once: at each start, the sets that started before and had not ended.
  // Stamps are PostgreSQL's now(), the time each transaction began: a claim whose
  // transaction began a moment before the previous set's last finish committed is
  // stamped a few ms before that end, though it could only see the place free after it.
  const later = (end: string, start: string) => Date.parse(end) - Date.parse(start) > STAMP_SKEW_MS;
  let most = 0;
  let worst = '';
  for (const s of spans) {
    const overlapping = spans.filter((o) => o.start <= s.start && later(o.end, s.start));
    if (overlapping.length > most) worst = overlapping.map((o) => `${o.start}…${o.end}`).join(', ');
    most = Math.max(most, overlapping.length);
  }
  assert.ok(most <= LIMIT, `at most ${LIMIT} sets ran at once; saw ${most}: ${worst}`);
  assert.equal(most, LIMIT, 'the limit was used: sets did run side by side');

  // In creation order: no set jumped the queue, so when a set started fewer than LIMIT of the sets created before it still ran.
  spans.forEach((s, i) => {
    const aheadRunning = spans.slice(0, i).filter((o) => later(o.end, s.start)).length;
    assert.ok(aheadRunning < LIMIT, `set #${i} started while ${aheadRunning} sets created before it still ran`);
  });
  for (const p of [...workers, one, two]) assert.deepEqual(await p.stop(), { code: 0, signal: null });
});
