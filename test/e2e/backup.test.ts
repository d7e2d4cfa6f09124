/**
 * `runset backup` while serve runs a set, and `runset restore` into another
 * data dir: the restored store serves every set and key. Restore refuses a
 * data dir a server owns, and replaces a store only with --force (keeping it);
 * backup never overwrites a file and sends PostgreSQL deployments to pg_dump.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, CLI, startRunset, tempDir, waitForSet } from '../helpers/server.js';

after(() => assertNoLeakedServers());

const CONFIG = `
environments:
  staging:
tests:
  - name: quick
    type: command
    run: [node, -e, "0"]
  - name: slow
    type: command
    run: [node, -e, "setTimeout(() => {}, 4000)"]
`;

function cli(args: string[], env: Record<string, string> = {}) {
  const res = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, RUNSET_DATABASE_URL: '', ...env } });
  return { code: res.status, out: res.stdout, err: res.stderr };
}

test('a backup taken while a set runs restores into another data dir with every set and key', { timeout: 120_000 }, async () => {
  const dir = tempDir('runset-backup-');
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, CONFIG);
  const dataDir = path.join(dir, 'data');
  const server = await startRunset({ configPath, dataDir });
  let restored: Awaited<ReturnType<typeof startRunset>> | undefined;
  try {
    const made = cli(['keys', 'create', '--name', 'from-before', '--role', 'read', '--data-dir', dataDir]);
    assert.equal(made.code, 0, made.err);
    const readKey = made.out.trim();
    const ended = (await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', labels: { branch: 'main' } } })).body.testRunSetId as string;
    await waitForSet(server, ended, 30_000);
    const running = (await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging' } })).body.testRunSetId as string;
    for (let i = 0; i < 200 && (await api<{ status: string }>(server, 'GET', `/v0/test-run-sets/${running}`)).body.status !== 'RUNNING'; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }

    const file = path.join(dir, 'runset-backup.db');
    const backup = cli(['backup', file, '--data-dir', dataDir]);
    assert.equal(backup.code, 0, backup.err);
    assert.match(backup.err, /backed up .*runset-backup\.db: 2 set\(s\), 2 key\(s\), 0 suite archive\(s\), 0 artifact\(s\), schema version \d+/);
    assert.match(cli(['backup', file, '--data-dir', dataDir]).err, /already exists; a backup never overwrites/);
    assert.match(cli(['backup', path.join(dir, 'x.db'), '--data-dir', dataDir], { RUNSET_DATABASE_URL: 'postgres://x' }).err, /pg_dump/);
    await server.stop();

    const otherDir = path.join(dir, 'restored');
    const restore = cli(['restore', file, '--data-dir', otherDir]);
    assert.equal(restore.code, 0, restore.err);
    assert.match(restore.err, /restored .*: 2 set\(s\), 2 key\(s\)/);
    assert.match(cli(['restore', file, '--data-dir', otherDir]).err, /already holds a store .* --force/);

    restored = await startRunset({ configPath, dataDir: otherDir, apiKey: server.apiKey });
    assert.match(cli(['restore', file, '--data-dir', otherDir, '--force']).err, /another runset process \(pid \d+\) serves the SQLite store/, 'never under a running server');
    const asRead = { url: restored.url, apiKey: readKey };
    const details = await api<{ labels: Record<string, string> }>(asRead, 'GET', `/v0/test-run-sets/${ended}/details`);
    assert.equal(details.status, 200, 'the key made before the backup works on the restored store');
    assert.deepEqual(details.body.labels, { branch: 'main' });
    assert.equal((await api<{ status: string }>(asRead, 'GET', `/v0/test-run-sets/${ended}`)).body.status, 'SUCCESS');
    const again = await waitForSet(restored, running, 30_000);
    assert.equal(again.status, 'SUCCESS', 'the set that was running when the backup was taken runs to its end on the restored store');
    await restored.stop();
    restored = undefined;

    const forced = cli(['restore', file, '--data-dir', otherDir, '--force']);
    assert.equal(forced.code, 0, forced.err);
    assert.match(forced.err, /kept as .*runset\.db\.before-restore-/);
    assert.ok(readdirSync(otherDir).some((name) => name.startsWith('runset.db.before-restore-')));
    assert.match(cli(['restore', configPath, '--data-dir', path.join(dir, 'nowhere')]).err, /cannot be opened as a SQLite database|is not a SQLite database|not a runset store/);
    assert.ok(!existsSync(path.join(dir, 'nowhere', 'runset.db')), 'a refused restore writes no store');
  } finally {
    await restored?.stop();
    await server.stop();
  }
});
