/**
 * Upgrades keep data: a store with the schema and rows of runset's first two
 * migrations (sets, members, keys; and on SQLite an artifact with its bytes)
 * is opened by today's `runset serve`, which applies every later migration;
 * then every set, member, key and artifact is still there and served. On
 * PostgreSQL three API processes start together on that old schema: the
 * migrations run once (each version recorded once), and all three serve.
 *
 * The old set ended a year ago, far past the default retention: a store from
 * before retention keeps it when serve is given none (serve says so, and it is
 * still served after the first sweep's time and more), and an explicit
 * `--retention 90d` removes it, the log counting it first. Dates are relative
 * to now, so the test means the same on any day.
 */
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { hashToken, newToken } from '../../src/auth/keys.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { api, startRunset, tempDir } from '../helpers/server.js';
import { postgresBefore, sqliteBefore } from '../helpers/old-store.js';
import { fleetOnFreshSchema, NO_DATABASE, query, TEST_DATABASE_URL } from '../helpers/postgres.js';

const FIRST_RELEASED = 2;
const CONFIG = `environments:\n  staging:\ntests:\n  - { name: quick, type: command, run: [node, -e, "0"] }\n`;
const SPEC = (name: string) => JSON.stringify({ name, type: 'command', run: ['true'], cwd: '/', tags: [], timeoutSeconds: 5, retries: 0 });

/**
 * Longer than the first sweep takes to come (a second after start) plus several
 * of the shortest sweep periods (a second): a sweep that would remove the old set
 * has had every chance to.
 */
const SEVERAL_SWEEPS_MS = 4000;
/** serve's warning at start on a store from before retention (KEPT_FOR_OLD_STORE). */
const KEPT = /set retention is off for this store: it was made by a runset without retention/;

/** The rows a store of the first release held: one key, one set of two members (one failed) that ended a year ago. */
function oldRows() {
  const token = newToken();
  const yearAgo = Date.now() - 365 * 86_400_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    token,
    key: { id: randomUUID(), name: 'old-ci', hash: hashToken(token), at: iso(yearAgo) },
    set: { id: randomUUID(), at: iso(yearAgo), started: iso(yearAgo + 1000), ended: iso(yearAgo + 9000) },
    runs: [
      { id: randomUUID(), position: 0, name: 'home', status: 'SUCCESS', error: null, output: 'ok' },
      { id: randomUUID(), position: 1, name: 'checkout', status: 'FAIL', error: 'expected 200, got 500', output: 'boom' },
    ],
    artifact: { id: randomUUID(), bytes: 'PNG…old screenshot' },
  };
}
type OldRows = ReturnType<typeof oldRows>;

/** The warning an explicit retention's first removal logs: one set, the old one's end, the retention. */
function removalLogged(rows: OldRows): RegExp {
  const ended = rows.set.ended.replace(/\./g, '\\.');
  return new RegExp(`"sets":1,"oldestEndedAt":"${ended}".*"retention":"90d \\(--retention\\)".*removing 1 set\\(s\\) that ended before`);
}

async function oldSetStatus(server: { url: string }, rows: OldRows): Promise<number> {
  return (await api({ url: server.url, apiKey: rows.token }, 'GET', `/v0/test-run-sets/${rows.set.id}`)).status;
}

/** What today's server must still say about the old rows, through the API. */
async function assertServed(server: { url: string; apiKey: string }, rows: OldRows, withArtifact: boolean): Promise<void> {
  const asOld = { url: server.url, apiKey: rows.token };
  const status = await api<{ status: string; progress: { counts: Record<string, number> }; createdAt: string }>(asOld, 'GET', `/v0/test-run-sets/${rows.set.id}`);
  assert.equal(status.status, 200, 'the key of the first release still works');
  assert.equal(status.body.status, 'FAIL');
  assert.deepEqual(status.body.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 1 });
  assert.equal(status.body.createdAt, rows.set.at);
  const members = await api<{ testRuns: Array<{ name: string; status: string; error: string | null; artifacts: Array<{ url: string }> }> }>(asOld, 'GET', `/v0/test-run-sets/${rows.set.id}/test-runs`);
  assert.deepEqual(members.body.testRuns.map((m) => [m.name, m.status, m.error]), rows.runs.map((r) => [r.name, r.status, r.error]));
  const history = await api<{ runs: Array<{ testRunId: string; result: string; error: string | null }> }>(asOld, 'GET', '/v0/tests/history?env=staging&name=checkout');
  assert.deepEqual(history.body.runs.map((r) => [r.testRunId, r.result, r.error]), [[rows.runs[1]!.id, 'FAIL', rows.runs[1]!.error]], 'old members are history: the migration gave them their environment');
  const keys = await api<{ keys: Array<{ id: string; role: string; envs: null }> }>(asOld, 'GET', '/v0/keys');
  const oldKey = keys.body.keys.find((k) => k.id === rows.key.id);
  assert.deepEqual(oldKey && { role: oldKey.role, envs: oldKey.envs }, { role: 'admin', envs: null }, 'an old key is admin everywhere');
  if (withArtifact) {
    const [artifact] = members.body.testRuns[1]!.artifacts;
    assert.ok(artifact, 'the artifact is listed');
    const res = await fetch(new URL(artifact.url, server.url), { headers: { authorization: `Bearer ${rows.token}` } });
    assert.equal(res.status, 200, `${artifact.url}: ${res.status}`);
    assert.equal(await res.text(), rows.artifact.bytes);
  }
  // And the upgraded store still takes new work (a set that is not due for years).
  const created = await api<{ testRunSetId: string }>(asOld, 'POST', '/v0/test-run-sets', { body: { env: 'staging' } });
  assert.equal(created.status, 200, created.text);
}

/** Polls `logs` until `pattern` shows (a loaded machine may be slow to sweep). */
async function waitForLog(logs: () => string, pattern: RegExp, withinMs = 30_000): Promise<void> {
  const until = Date.now() + withinMs;
  while (!pattern.test(logs())) {
    assert.ok(Date.now() < until, `no ${String(pattern)} within ${withinMs}ms:\n${logs()}`);
    await sleep(100);
  }
}

/** The removal was announced before it ran: wait for the set to answer 404. */
async function waitForGone(server: { url: string }, rows: OldRows, withinMs = 30_000): Promise<void> {
  const until = Date.now() + withinMs;
  while ((await oldSetStatus(server, rows)) !== 404) {
    assert.ok(Date.now() < until, `the old set was still served ${withinMs}ms after its removal was logged`);
    await sleep(100);
  }
}

describe('upgrades (SQLite and PostgreSQL at once: independent stores)', { concurrency: true }, () => {
  test('SQLite: a store of the first release opens, upgrades and serves everything', { timeout: 150_000 }, async () => {
    const dir = tempDir('runset-upgrade-');
    const dataDir = path.join(dir, 'data');
    mkdirSync(path.join(dataDir, 'artifacts'), { recursive: true });
    const rows = oldRows();
    const db = sqliteBefore(path.join(dataDir, 'runset.db'), FIRST_RELEASED + 1);
    db.prepare('INSERT INTO api_keys (id, name, hash, created_at) VALUES (?, ?, ?, ?)').run(rows.key.id, rows.key.name, rows.key.hash, rows.key.at);
    db.prepare(
      `INSERT INTO test_run_sets (id, env, status, created_at, started_at, ended_at, count_waiting, count_success, count_fail, variables, overrides, key_id)
       VALUES (?, 'staging', 'FAIL', ?, ?, ?, 0, 1, 1, '{}', '{}', ?)`,
    ).run(rows.set.id, rows.set.at, rows.set.started, rows.set.ended, rows.key.id);
    for (const r of rows.runs) {
      db.prepare(
        `INSERT INTO test_runs (id, set_id, position, name, type, spec, status, attempts, started_at, ended_at, duration_ms, error, output)
         VALUES (?, ?, ?, ?, 'command', ?, ?, 1, ?, ?, 100, ?, ?)`,
      ).run(r.id, rows.set.id, r.position, r.name, SPEC(r.name), r.status, rows.set.started, rows.set.ended, r.error, r.output);
    }
    const relative = `${rows.artifact.id.slice(0, 2)}/${rows.artifact.id}`;
    mkdirSync(path.join(dataDir, 'artifacts', rows.artifact.id.slice(0, 2)), { recursive: true });
    writeFileSync(path.join(dataDir, 'artifacts', relative), rows.artifact.bytes);
    db.prepare("INSERT INTO artifacts VALUES (?, ?, ?, 'screenshot.png', 'image/png', ?, ?, ?)").run(
      rows.artifact.id,
      rows.runs[1]!.id,
      rows.set.id,
      Buffer.byteLength(rows.artifact.bytes),
      `file:${relative}`,
      rows.set.ended,
    );
    db.close();

    // Artifacts have had their own retention (7d) since the first release: the old screenshot needs a longer one.
    const keepArtifacts = ['--artifact-retention', '3650d'];
    let server = await startRunset({ config: CONFIG, dataDir, args: keepArtifacts });
    try {
      await assertServed(server, rows, true);
      const after = new Database(path.join(dataDir, 'runset.db'), { readonly: true });
      const versions = (after.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: number }>).map((v) => v.version);
      after.close();
      assert.deepEqual(versions, SQLITE_MIGRATIONS.map((m) => m.version).sort((a, b) => a - b), 'every later migration applied, once');
      const first = server;
      await waitForLog(() => first.logs(), KEPT);
      await sleep(SEVERAL_SWEEPS_MS);
      assert.equal(await oldSetStatus(server, rows), 200, 'no retention given: the year-old set is kept');
      await server.stop();

      server = await startRunset({ config: CONFIG, dataDir, args: [...keepArtifacts, '--retention', '90d'] });
      const second = server;
      await waitForLog(() => second.logs(), removalLogged(rows));
      assert.doesNotMatch(server.logs(), KEPT, 'a retention given: no warning');
      await waitForGone(server, rows);
    } finally {
      await server.stop();
    }
  });

  test('PostgreSQL: three processes start together on a first-release schema; migrations run once; all serve the old rows', { skip: TEST_DATABASE_URL ? false : NO_DATABASE, timeout: 180_000 }, async (t) => {
    const dir = tempDir('runset-upgrade-pg-');
    const configPath = path.join(dir, 'runset.config.yaml');
    writeFileSync(configPath, CONFIG);
    const { fleet, schema } = fleetOnFreshSchema(t, 'runset_upg', configPath, dir);
    const url = TEST_DATABASE_URL!;
    const rows = oldRows();
    const s = await postgresBefore(url, schema, FIRST_RELEASED + 1);
    await query(url, `INSERT INTO ${s}.api_keys (id, name, hash, created_at) VALUES ($1, $2, $3, $4)`, [rows.key.id, rows.key.name, rows.key.hash, rows.key.at]);
    await query(
      url,
      `INSERT INTO ${s}.test_run_sets (id, env, status, created_at, started_at, ended_at, count_waiting, count_success, count_fail, variables, overrides, key_id)
       VALUES ($1, 'staging', 'FAIL', $2, $3, $4, 0, 1, 1, '{}', '{}', $5)`,
      [rows.set.id, rows.set.at, rows.set.started, rows.set.ended, rows.key.id],
    );
    for (const r of rows.runs) {
      await query(
        url,
        `INSERT INTO ${s}.test_runs (id, set_id, position, name, type, spec, status, attempts, started_at, ended_at, duration_ms, error, output)
         VALUES ($1, $2, $3, $4, 'command', $5, $6, 1, $7, $8, 100, $9, $10)`,
        [r.id, rows.set.id, r.position, r.name, SPEC(r.name), r.status, rows.set.started, rows.set.ended, r.error, r.output],
      );
    }

    const starting = Date.now();
    const apis = await Promise.all([fleet.api(), fleet.api(), fleet.api()]);
    t.diagnostic(`three processes listening ${Date.now() - starting} ms after they started`);
    const versions = (await query<{ version: number }>(url, `SELECT version FROM ${s}.schema_migrations ORDER BY version`)).map((v) => v.version);
    assert.deepEqual(versions, POSTGRES_MIGRATIONS.map((m) => m.version).sort((a, b) => a - b), 'each migration recorded once');
    for (const server of apis) await assertServed(server, rows, false);
    for (const server of apis) await server.waitForOutput(KEPT);
    await sleep(SEVERAL_SWEEPS_MS);
    for (const server of apis) assert.equal(await oldSetStatus(server, rows), 200, `no retention given: ${server.name} still serves the year-old set`);

    const sweeper = await fleet.api({ args: ['--retention', '90d'] });
    await sweeper.waitForOutput(removalLogged(rows), 30_000);
    await waitForGone(apis[0], rows);
    for (const server of [...apis, sweeper]) await server.stop();
  });
});
