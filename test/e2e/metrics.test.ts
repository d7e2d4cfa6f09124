/**
 * Prometheus metrics over real HTTP (SQLite, one serve process with workers):
 * --metrics-port serves /metrics on its own listener, never on the API's port;
 * the metrics move when a set runs (sets created and ended, members by outcome,
 * durations, claims, requests by route template); the webhook backlog is real;
 * metrics are off by default; a bad port is refused before anything starts.
 * The alert rules of docs/deploy.md parse and name only metrics a scrape has.
 */
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import YAML from 'yaml';
import { api, assertNoLeakedServers, CLI, REPO_ROOT, startRunset, waitForSet } from '../helpers/server.js';
import { freePort } from '../helpers/receiver.js';
import { metricsUrlIn, scrape, scrapeUntil, selectorsIn, valueOf, type Scrape } from '../helpers/prometheus.js';

afterEach(assertNoLeakedServers);
after(assertNoLeakedServers);

const CONFIG = (hook: string) => `
environments:
  local:
tests:
  - name: passes
    type: command
    run: [node, -e, "0"]
  - name: fails
    type: command
    run: [node, -e, "process.exit(3)"]
webhooks:
  - name: down
    url: ${hook}
    secret: \${env:HOOK_SECRET}
    events: [set.finished]
`;

/** The alerting rules between the alert-rules markers of docs/deploy.md. */
function alertRules(): Array<{ alert: string; expr: string; for?: string; labels?: { severity?: string }; annotations?: { summary?: string } }> {
  const doc = readFileSync(`${REPO_ROOT}docs/deploy.md`, 'utf8');
  const block = /<!-- alert-rules:start -->\n```yaml\n([\s\S]*?)```\n<!-- alert-rules:end -->/.exec(doc);
  assert.ok(block, 'docs/deploy.md has the alert-rules block');
  const parsed = YAML.parse(block[1]!) as { groups: Array<{ name: string; rules: ReturnType<typeof alertRules> }> };
  return parsed.groups.flatMap((g) => g.rules);
}

describe('metrics', () => {
  test('served apart from the API, with the right labels, moving when a set runs; the alert rules name real metrics', async () => {
    const closed = await freePort(); // nothing listens there: the webhook's delivery stays pending
    const server = await startRunset({
      config: CONFIG(`http://127.0.0.1:${closed}/hook`),
      args: ['--metrics-port', '0', '--workers', '2', '--webhook-retry', '1h'],
      env: { HOOK_SECRET: randomBytes(16).toString('hex') },
    });
    const metricsUrl = metricsUrlIn(server.logs());
    const apiOrigin = new URL(server.url).origin;
    assert.notEqual(new URL(metricsUrl).port, new URL(server.url).port);

    const before = await scrape(metricsUrl);
    assert.equal(valueOf(before, 'runset_sets_created_total'), undefined);
    assert.equal(valueOf(before, 'runset_worker_slots'), 2);
    assert.equal(valueOf(before, 'runset_worker_slots_busy'), 0);
    assert.equal(valueOf(before, 'runset_workers_live'), 1);
    assert.equal(valueOf(before, 'runset_members_waiting'), 0);
    assert.equal(valueOf(before, 'runset_leases_lost_total', { outcome: 'requeued' }), 0);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      assert.ok(valueOf(before, name) !== undefined, `Node's default metric ${name}`);
    }

    const created = await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env: 'local' } });
    assert.equal(created.status, 200, created.text);
    const id = created.body.testRunSetId;
    assert.equal((await waitForSet(server, id)).status, 'FAIL');
    assert.equal((await api(server, 'GET', '/v0/test-run-sets/not-a-uuid')).status, 400);
    assert.equal((await fetch(`${apiOrigin}/no/such/page/${id}`)).status, 404);

    // A set's end is counted when its webhook event is fanned out (the next delivery tick).
    const s = await scrapeUntil(metricsUrl, (x) => valueOf(x, 'runset_sets_ended_total') === 1 && (valueOf(x, 'runset_webhook_deliveries_pending') ?? 0) >= 1);
    assert.equal(valueOf(s, 'runset_sets_created_total', { env: 'local' }), 1);
    assert.equal(valueOf(s, 'runset_sets_ended_total', { env: 'local', status: 'FAIL' }), 1);
    assert.equal(valueOf(s, 'runset_members_total', { type: 'command', outcome: 'SUCCESS' }), 1);
    assert.equal(valueOf(s, 'runset_members_total', { type: 'command', outcome: 'FAIL' }), 1);
    assert.equal(valueOf(s, 'runset_member_duration_seconds_count', { type: 'command' }), 2);
    assert.ok(valueOf(s, 'runset_member_duration_seconds_sum', { type: 'command' })! > 0);
    assert.equal(valueOf(s, 'runset_member_duration_seconds_bucket', { type: 'command', le: '+Inf' }), 2);
    assert.equal(valueOf(s, 'runset_claim_to_start_seconds_count', { type: 'command' }), 2);
    assert.equal(valueOf(s, 'runset_webhook_deliveries_pending'), 1);
    assert.equal(valueOf(s, 'runset_members_waiting'), 0);
    assert.equal(s.types.get('runset_store_errors_total'), 'counter');

    // Requests by route template, method and status; the raw URL (and so the set id) never appears.
    const requests = (labels: Record<string, string>) => valueOf(s, 'runset_http_request_duration_seconds_count', labels) ?? 0;
    assert.equal(requests({ method: 'POST', route: '/api/v0/test-run-sets', status_code: '200' }), 1);
    assert.ok(requests({ method: 'GET', route: '/api/v0/test-run-sets/:id', status_code: '200' }) >= 1);
    assert.equal(requests({ method: 'GET', route: '/api/v0/test-run-sets/:id', status_code: '400' }), 1);
    assert.equal(requests({ method: 'GET', route: 'unmatched', status_code: '404' }), 1);
    assert.deepEqual(s.samples.filter((x) => Object.values(x.labels).some((v) => v.includes(id) || v.includes('not-a-uuid'))), []);
    assert.equal(s.types.get('runset_http_request_duration_seconds'), 'histogram');

    // The API's port has no /metrics, and the metrics port serves nothing else.
    for (const url of [`${apiOrigin}/metrics`, `${server.url}/metrics`]) assert.equal((await fetch(url)).status, 404, url);
    assert.equal((await fetch(new URL(`/api/v0/test-run-sets/${id}`, metricsUrl))).status, 404);

    checkAlertRules(s);
    assert.equal(await server.stop(), 0);
  });

  test('off by default: no listener, no /metrics on the API', async () => {
    const server = await startRunset({ config: CONFIG('http://127.0.0.1:9/hook'), env: { HOOK_SECRET: 'x'.repeat(32), RUNSET_LOG_LEVEL: 'info' } });
    try {
      // The start line on stderr may come before pino's on stdout.
      const until = Date.now() + 5000;
      while (!/runset started/.test(server.logs()) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      assert.match(server.logs(), /"metrics":"off".*"msg":"runset started"/);
      assert.doesNotMatch(server.logs(), /metrics at/);
      assert.equal((await fetch(`${new URL(server.url).origin}/metrics`)).status, 404);
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  test('a bad --metrics-port is refused before anything starts, saying what is accepted', () => {
    const run = (args: string[], env: Record<string, string> = {}) =>
      spawnSync(process.execPath, [CLI, ...args, '--config', '/nonexistent/runset.config.yaml'], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 });
    const bad = run(['serve', '--metrics-port', 'nine']);
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, /--metrics-port \(RUNSET_METRICS_PORT\): "nine" is not a port; expected a port number from 1 to 65535 \(0: any free port\)/);
    const same = run(['serve', '--port', '9464'], { RUNSET_METRICS_PORT: '9464' });
    assert.equal(same.status, 2, same.stderr);
    assert.match(same.stderr, /--metrics-port \(RUNSET_METRICS_PORT\): 9464 is the API's --port too/);
    const worker = run(['worker', '--metrics-port', '70000', '--database-url', 'postgres://nowhere.invalid/x']);
    assert.equal(worker.status, 2, worker.stderr);
    assert.match(worker.stderr, /"70000" is not a port/);
  });
});

/** Each rule of docs/deploy.md: complete, its expression valid PromQL naming only metrics the scrape has. */
function checkAlertRules(s: Scrape): void {
  const rules = alertRules();
  assert.deepEqual(rules.map((r) => r.alert), ['RunsetQueueGrowing', 'RunsetNoLiveWorkers', 'RunsetStoreErrors', 'RunsetSetsFailingAboveNormal', 'RunsetWebhookBacklog']);
  const known = new Set([...s.types.keys(), ...s.samples.map((x) => x.name)]);
  for (const rule of rules) {
    assert.ok(rule.for && rule.labels?.severity && rule.annotations?.summary, `${rule.alert} has for, severity and summary`);
    const names = selectorsIn(rule.expr).metrics;
    assert.ok(names.length > 0, `${rule.alert} names a metric`);
    for (const name of names) assert.ok(known.has(name), `${rule.alert}: ${name} is not in a scrape`);
  }
}
