/**
 * Retention over real HTTP: a server with a short `--retention` removes sets
 * once they have ended that long ago (their status and members answer 404, an
 * Idempotency-Key of theirs starts a fresh set) while a set that runs longer
 * than the retention is left alone; `runset prune` prints what it removed or,
 * with --dry-run, would remove (removing nothing), takes an unused suite
 * version with the sets, and refuses to prune a SQLite store under a running
 * server.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, CLI, startRunset, tempDir, waitForSet } from '../helpers/server.js';
import { packSuite } from '../../src/suites/pack.js';

after(() => assertNoLeakedServers());

const CONFIG = `
environments:
  fast:
  slow:
tests:
  - name: quick
    type: command
    run: [node, -e, "0"]
    environments: [fast]
  - name: long
    type: command
    run: [node, -e, "setTimeout(() => {}, 6000)"]
    environments: [slow]
`;

function cli(args: string[]) {
  const res = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, RUNSET_DATABASE_URL: '' } });
  return { code: res.status, out: res.stdout, err: res.stderr };
}

function configIn(dir: string): string {
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, CONFIG);
  return configPath;
}

async function statusOf(server: { url: string; apiKey: string }, id: string): Promise<number> {
  return (await api(server, 'GET', `/v0/test-run-sets/${id}`)).status;
}

test('a server with a short retention removes ended sets, never running ones', { timeout: 60_000 }, async () => {
  const server = await startRunset({ configPath: configIn(tempDir('runset-retention-')), args: ['--retention', '2s'] });
  try {
    const create = (env: string, key?: string) =>
      api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env }, headers: key ? { 'idempotency-key': key } : {} });
    const long = (await create('slow')).body.testRunSetId;
    const quick = (await create('fast', 'build-41')).body.testRunSetId;
    await waitForSet(server, quick);
    assert.equal((await create('fast', 'build-41')).body.testRunSetId, quick, 'a replay while the set is kept');

    const until = Date.now() + 15_000;
    while ((await statusOf(server, quick)) === 200) {
      assert.ok(Date.now() < until, 'the ended set was removed within its retention and a sweep');
      await new Promise((r) => setTimeout(r, 100));
    }
    const gone = await api<{ code: string }>(server, 'GET', `/v0/test-run-sets/${quick}`);
    assert.deepEqual([gone.status, gone.body.code], [404, 'not_found']);
    assert.equal((await api(server, 'GET', `/v0/test-run-sets/${quick}/test-runs`)).status, 404);
    // Created before the quick one and older than the retention, but still running: kept.
    const running = await api<{ status: string }>(server, 'GET', `/v0/test-run-sets/${long}`);
    assert.deepEqual([running.status, running.body.status], [200, 'RUNNING']);

    const fresh = await create('fast', 'build-41');
    assert.equal(fresh.status, 200);
    assert.notEqual(fresh.body.testRunSetId, quick, 'the key of a removed set starts a fresh set');
    await waitForSet(server, long, 20_000);
  } finally {
    await server.stop();
  }
});

test('runset prune: --dry-run removes nothing; prune prints what it removed', { timeout: 60_000 }, async () => {
  const dir = tempDir('runset-prune-');
  const configPath = configIn(dir);
  const dataDir = path.join(dir, 'data');
  let server = await startRunset({ configPath, dataDir, args: ['--retention', '0'] });
  const ids: string[] = [];
  try {
    for (let i = 0; i < 2; i++) ids.push((await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env: 'fast' } })).body.testRunSetId);
    for (const id of ids) await waitForSet(server, id);
    // A suite version no set ran and no name points at: the prune takes it too.
    const suiteDir = tempDir('runset-prune-suite-');
    writeFileSync(path.join(suiteDir, 'runset.config.yaml'), 'tests:\n  - { name: a, type: command, run: ["true"] }\n');
    const version = await packSuite(suiteDir);
    const uploaded = await fetch(`${server.url}/v0/suites/${version.id}`, { method: 'PUT', headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/gzip' }, body: version.archive });
    assert.equal(uploaded.status, 201, await uploaded.text());

    const dry = cli(['prune', '--older-than', '0', '--dry-run', '--data-dir', dataDir]);
    assert.equal(dry.code, 0, dry.err);
    assert.match(dry.out, /^would remove 2 set\(s\) that ended before \S+Z: 2 member\(s\), 0 artifact\(s\), 0 bytes of artifact files\n$/);
    const kept = cli(['prune', '--older-than', '1h', '--dry-run', '--json', '--data-dir', dataDir]);
    assert.deepEqual({ ...JSON.parse(kept.out), before: 'x' }, { dryRun: true, before: 'x', sets: 0, members: 0, artifacts: 0, artifactBytes: 0 });
    for (const id of ids) assert.equal(await statusOf(server, id), 200, 'a dry run removes nothing');

    const refused = cli(['prune', '--older-than', '0', '--data-dir', dataDir]);
    assert.equal(refused.code, 2);
    assert.match(refused.err, /serves the SQLite store .* stop it to prune now, or let it remove old sets itself \(serve --retention, e.g. 30d\); --dry-run works while it runs/);
    assert.match(cli(['prune', '--older-than', 'soon', '--data-dir', dataDir]).err, /--older-than: invalid duration "soon".*expected a number of seconds/);
    await server.stop();

    const pruned = cli(['prune', '--older-than', '0', '--json', '--data-dir', dataDir]);
    assert.equal(pruned.code, 0, pruned.err);
    assert.deepEqual({ ...JSON.parse(pruned.out), before: 'x' }, { dryRun: false, before: 'x', sets: 2, members: 2, artifacts: 0, artifactBytes: 0, suiteVersions: 1 });
    server = await startRunset({ configPath, dataDir, args: ['--retention', '0'] });
    for (const id of ids) assert.equal(await statusOf(server, id), 404);
    assert.equal((await api(server, 'GET', `/v0/suites/${version.id}`)).status, 404, 'the unused version went with the prune');
  } finally {
    await server.stop();
  }
});
