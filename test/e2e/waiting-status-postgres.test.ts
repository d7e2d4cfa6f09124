/**
 * The waiting status on PostgreSQL: a client waits on one API process
 * (`serve --no-workers`) while a worker process elsewhere moves the set's
 * members; the API process hears of it by reading its watched sets, and
 * answers with the new status.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, tempDir } from '../helpers/server.js';
import { fleetOnFreshSchema, NO_DATABASE, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { createSet, until } from '../helpers/scale.js';

const SKIP = TEST_DATABASE_URL ? false : NO_DATABASE;

test('a client waiting on an API process is answered when a separate worker ends the set', { skip: SKIP, timeout: 90_000 }, async (t) => {
  const dir = tempDir('runset-wait-pg-');
  const gate = path.join(dir, 'gate');
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(
    configPath,
    `environments:\n  e2e: { variables: { GATE: "${gate}" } }\ntests:\n` +
      `  - { name: gated, type: command, run: [node, -e, "const t = setInterval(() => require('fs').existsSync(process.env.GATE) && clearInterval(t), 20)"] }\n`,
  );
  const { fleet } = fleetOnFreshSchema(t, 'runset_wait', configPath, dir);
  const server = await fleet.api();
  const worker = await fleet.worker(1);

  const id = await createSet(server, 'e2e');
  const get = (headers: Record<string, string> = {}) => api<{ status: string }>(server, 'GET', `/v0/test-run-sets/${id}`, { headers });
  let etag = '';
  await until('the member runs', async () => {
    const res = await get();
    etag = res.headers.get('etag') ?? '';
    return res.body.status === 'RUNNING';
  });
  const waiting = get({ 'if-none-match': etag, prefer: 'wait=30' });
  await new Promise((r) => setTimeout(r, 300));
  writeFileSync(gate, '');
  const answer = await waiting;
  assert.equal(answer.status, 200, 'answered by the change, long before 30 s');
  assert.equal(answer.body.status, 'SUCCESS');
  assert.equal(answer.headers.get('preference-applied'), 'wait=30');
  assert.notEqual(answer.headers.get('etag'), etag);

  await server.stop();
  await worker.stop();
});
