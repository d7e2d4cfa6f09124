/**
 * Webhooks on PostgreSQL with two API processes and a separate worker: both
 * API processes deliver from the one outbox, and every set's start and end
 * reaches the receiver exactly once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/server.js';
import { fleetOnFreshSchema, NO_DATABASE, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { Receiver } from '../helpers/receiver.js';
import { createSet } from '../helpers/scale.js';

const SKIP = TEST_DATABASE_URL ? false : NO_DATABASE;
const SETS = 12;

test('two API processes on one PostgreSQL deliver each event once', { skip: SKIP, timeout: 120_000 }, async (t) => {
  const receiver = await new Receiver().start();
  t.after(() => receiver.stop());
  const dir = tempDir('runset-webhooks-pg-');
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(
    configPath,
    `environments:\n  e2e:\ntests:\n  - { name: quick, type: command, run: [node, -e, "0"] }\n` +
      `webhooks:\n  - { url: "${receiver.url}", secret: "\${env:HOOK_SECRET}", events: [set.started, set.finished] }\n`,
  );
  const { fleet } = fleetOnFreshSchema(t, 'runset_hooks', configPath, dir);
  const env = { HOOK_SECRET: 'pg-secret' };
  const apis = [await fleet.api({ env }), await fleet.api({ env })];
  const worker = await fleet.worker(2);

  const ids: string[] = [];
  for (let i = 0; i < SETS; i++) ids.push(await createSet(apis[i % 2]!, 'e2e'));
  await receiver.until('every set started and finished', () => receiver.delivered('set.finished').length >= SETS && receiver.delivered('set.started').length >= SETS, 60_000);
  // Time for a second process to deliver anything twice, were it going to.
  await new Promise((r) => setTimeout(r, 2500));

  const seen = receiver.received.map((r) => {
    const body = JSON.parse(r.body) as { event: string; testRunSet: { id: string } };
    return `${body.testRunSet.id} ${body.event}`;
  });
  assert.equal(seen.length, 2 * SETS, `one request per set and event, got ${seen.length}`);
  assert.equal(new Set(seen).size, 2 * SETS);
  assert.deepEqual(new Set(seen.map((s) => s.split(' ')[0])), new Set(ids));
  assert.equal(new Set(receiver.received.map((r) => r.headers['runset-delivery'])).size, 2 * SETS);

  for (const p of [...apis, worker]) await p.stop();
});
