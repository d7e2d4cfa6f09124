/**
 * Metrics across processes, on PostgreSQL: an API process (`serve
 * --no-workers`) and a separate `runset worker`, each with --metrics-port.
 * Each counts what it does — the API the requests and the sets, the worker the
 * members, their durations and claims — and both read the same store-wide
 * queue and live workers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, tempDir, waitForSet } from '../helpers/server.js';
import { fleetOnFreshSchema, NO_DATABASE, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { metricsUrlIn, scrape, scrapeUntil, valueOf } from '../helpers/prometheus.js';

const CONFIG = `
environments:
  staging:
tests:
  - { name: passes, type: command, run: [node, -e, "0"] }
  - { name: also passes, type: command, run: [node, -e, "0"] }
  - { name: fails, type: command, run: [node, -e, "process.exit(3)"] }
`;

test('API and worker processes each serve their own metrics, on one PostgreSQL', { skip: !TEST_DATABASE_URL && NO_DATABASE, timeout: 120_000 }, async (t) => {
  const dir = tempDir('runset-metrics-pg-');
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, CONFIG);
  const { fleet } = fleetOnFreshSchema(t, 'runset_metrics', configPath, dir);
  const server = await fleet.api({ args: ['--metrics-port', '0', '--poll', '200ms'] });
  const worker = await fleet.worker(2, { args: ['--metrics-port', '0', '--poll', '200ms'] });
  const apiMetrics = metricsUrlIn(server.logs());
  const workerMetrics = metricsUrlIn(worker.logs());

  const created = await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' } });
  assert.equal(created.status, 200, created.text);
  assert.equal((await waitForSet(server, created.body.testRunSetId, 60_000)).status, 'FAIL');

  // The API process: requests and sets; no worker slots of its own.
  const a = await scrapeUntil(apiMetrics, (x) => valueOf(x, 'runset_sets_ended_total') === 1);
  assert.equal(valueOf(a, 'runset_sets_created_total', { env: 'staging' }), 1);
  assert.equal(valueOf(a, 'runset_sets_ended_total', { env: 'staging', status: 'FAIL' }), 1);
  assert.equal(valueOf(a, 'runset_http_request_duration_seconds_count', { method: 'POST', route: '/api/v0/test-run-sets', status_code: '200' }), 1);
  assert.equal(valueOf(a, 'runset_members_total'), undefined);
  assert.equal(valueOf(a, 'runset_worker_slots'), undefined);

  // The worker process: members, durations and claims; no HTTP API.
  const w = await scrape(workerMetrics);
  assert.equal(valueOf(w, 'runset_members_total', { type: 'command', outcome: 'SUCCESS' }), 2);
  assert.equal(valueOf(w, 'runset_members_total', { type: 'command', outcome: 'FAIL' }), 1);
  assert.equal(valueOf(w, 'runset_member_duration_seconds_count', { type: 'command' }), 3);
  assert.equal(valueOf(w, 'runset_claim_to_start_seconds_count', { type: 'command' }), 3);
  assert.equal(valueOf(w, 'runset_worker_slots'), 2);
  assert.equal(valueOf(w, 'runset_http_request_duration_seconds_count'), undefined);
  assert.equal(valueOf(w, 'runset_sets_created_total'), undefined);
  assert.ok(valueOf(w, 'process_cpu_user_seconds_total') !== undefined);

  // Store-wide figures read the same from either process.
  for (const s of [a, w]) {
    assert.equal(valueOf(s, 'runset_workers_live'), 1);
    assert.equal(valueOf(s, 'runset_members_waiting'), 0);
    assert.equal(valueOf(s, 'runset_webhook_deliveries_pending'), 0);
  }
  assert.equal((await fetch(new URL('/', workerMetrics))).status, 404);

  await worker.stop();
  await server.stop();
});
