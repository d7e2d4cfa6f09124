/**
 * What a backup must bring back besides rows: an uploaded suite version's
 * archive and the artifacts its sets kept. After `runset backup` and `runset
 * restore` into a fresh data dir, a new set of the restored version runs to
 * SUCCESS, *Run again* works and the earlier artifact downloads; both commands
 * say where the secret key must come from. And, on SQLite and PostgreSQL, a
 * version whose bytes went missing takes them back from a push of the same
 * archive (201; asked first, as `runset suites push` does, it is 404), after
 * which it runs again.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { create as tarCreate } from 'tar';
import { api, assertNoLeakedServers, CLI, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { dropSchemas, newSchemaName, NO_DATABASE, query, TEST_DATABASE_URL } from '../helpers/postgres.js';

after(() => assertNoLeakedServers());

const SERVER_CONFIG = `
environments:
  preview: { allowSuiteUploads: true }
tests:
  - { name: server own, type: command, run: [node, -e, "0"] }
`;

interface Member { name: string; status: string; error: string | null; artifacts: Array<{ name: string; url: string }> }

/** An uploaded suite: one command that writes out/report.txt (kept as an artifact) holding `marker`. */
async function suiteArchive(marker: string): Promise<{ id: string; bytes: Buffer }> {
  const dir = tempDir('runset-backup-suite-');
  writeFileSync(path.join(dir, 'write.js'), "const fs = require('fs'); fs.mkdirSync('out', { recursive: true }); fs.writeFileSync('out/report.txt', fs.readFileSync('marker.txt', 'utf8'));\n");
  writeFileSync(path.join(dir, 'marker.txt'), marker);
  writeFileSync(path.join(dir, 'runset.config.yaml'), 'tests:\n  - { name: report, type: command, run: [node, write.js], artifacts: ["out/*.txt"] }\n');
  const file = path.join(tempDir('runset-backup-tgz-'), 'suite.tar.gz');
  await tarCreate({ gzip: true, file, cwd: dir, portable: true }, ['write.js', 'marker.txt', 'runset.config.yaml']);
  const bytes = readFileSync(file);
  return { id: createHash('sha256').update(bytes).digest('hex'), bytes };
}

async function upload(server: RunningServer, id: string, bytes: Buffer): Promise<number> {
  const res = await fetch(`${server.url}/v0/suites/${id}`, { method: 'PUT', headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/gzip' }, body: bytes });
  await res.arrayBuffer();
  return res.status;
}

/** Runs a set of the version to its end; answers its one member. */
async function runVersion(server: RunningServer, id: string): Promise<{ setId: string; status: string; member: Member }> {
  const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'preview', suite: id } });
  assert.ok(created.status === 200 || created.status === 201, JSON.stringify(created.body));
  const setId = created.body.testRunSetId as string;
  const ended = await waitForSet(server, setId, 60_000);
  const members = (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${setId}/test-runs`)).body.testRuns;
  return { setId, status: ended.status, member: members.find((m) => m.name === 'report')! };
}

async function download(server: RunningServer, url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(server.url.replace(/\/api$/, '') + url, { headers: { authorization: `Bearer ${server.apiKey}` } });
  return { status: res.status, text: await res.text() };
}

function cli(args: string[]) {
  const res = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, RUNSET_DATABASE_URL: '' } });
  return { code: res.status, err: res.stderr };
}

test('a restored data dir runs an uploaded suite version, runs a set again and serves its artifacts', { timeout: 180_000 }, async () => {
  const dir = tempDir('runset-backup-suites-');
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, SERVER_CONFIG);
  const dataDir = path.join(dir, 'data');
  const server = await startRunset({ configPath, dataDir });
  let restored: RunningServer | undefined;
  try {
    const suite = await suiteArchive('from before the backup');
    assert.equal(await upload(server, suite.id, suite.bytes), 201);
    const first = await runVersion(server, suite.id);
    assert.equal(first.status, 'SUCCESS', first.member.error ?? '');
    const artifact = first.member.artifacts.find((a) => a.name === 'report.txt');
    assert.ok(artifact, 'the command kept its file');

    const file = path.join(dir, 'backup.db');
    const backup = cli(['backup', file, '--data-dir', dataDir]);
    assert.equal(backup.code, 0, backup.err);
    assert.match(backup.err, /1 suite archive\(s\), 1 artifact\(s\)/);
    assert.match(backup.err, /secret key is not in any backup: .*secret\.key .*RUNSET_SECRET_KEY; without it the stored secret values cannot be opened/);
    await server.stop();

    const otherDir = path.join(dir, 'restored');
    const restore = cli(['restore', file, '--data-dir', otherDir]);
    assert.equal(restore.code, 0, restore.err);
    assert.match(restore.err, /restored .*1 suite archive\(s\), 1 artifact\(s\)/);
    assert.match(restore.err, /secret\.key/);
    restored = await startRunset({ configPath, dataDir: otherDir, apiKey: server.apiKey });

    const fresh = await runVersion(restored, suite.id);
    assert.equal(fresh.status, 'SUCCESS', `a new set of the restored version runs: ${fresh.member.error ?? ''}`);
    const again = await api(restored, 'POST', `/v0/test-run-sets/${first.setId}/rerun`, { body: {} });
    assert.ok(again.status === 200 || again.status === 201, JSON.stringify(again.body));
    assert.equal((await waitForSet(restored, again.body.testRunSetId as string, 60_000)).status, 'SUCCESS', 'Run again works on the restored store');
    const got = await download(restored, artifact.url);
    assert.equal(got.status, 200, 'the artifact kept before the backup downloads');
    assert.equal(got.text, 'from before the backup');
  } finally {
    await restored?.stop();
    await server.stop();
  }
});

const stores: Array<[string, string | undefined]> = [['SQLite', undefined], ['PostgreSQL', TEST_DATABASE_URL ?? '']];
for (const [shape, url] of stores) {
  describe(`a version whose archive's bytes are missing: ${shape}`, { skip: url === '' ? NO_DATABASE : undefined }, () => {
    test('a push of the same archive stores them again (201), and the version runs again', { timeout: 120_000 }, async () => {
      const dir = tempDir('runset-repush-');
      const dataDir = path.join(dir, 'data');
      mkdirSync(dataDir);
      const schema = newSchemaName('runset_repush');
      const server = await startRunset({ config: SERVER_CONFIG, dataDir, args: url ? ['--database-url', url, '--database-schema', schema] : [] });
      try {
        const suite = await suiteArchive(`repush ${shape}`);
        assert.equal(await upload(server, suite.id, suite.bytes), 201);
        const onDisk = path.join(dataDir, 'suites', suite.id.slice(0, 2), suite.id);
        if (url) await query(url, `DELETE FROM ${schema}.suite_chunks WHERE blob_id = $1`, [suite.id]);
        else rmSync(onDisk);
        const broken = await runVersion(server, suite.id);
        assert.equal(broken.status, 'FAIL');
        assert.match(broken.member.error ?? '', /archive's bytes are missing/);

        const asked = await api<{ detail: string }>(server, 'GET', `/v0/suites/${suite.id}`);
        assert.equal(asked.status, 404, 'what `runset suites push` asks: the version is not had, so it uploads');
        assert.match(asked.body.detail, /recorded but its archive's bytes are missing from this server; push it again/);
        assert.equal(await upload(server, suite.id, suite.bytes), 201, 'the bytes are stored again');
        assert.equal((await api(server, 'GET', `/v0/suites/${suite.id}`)).status, 200);
        if (url) assert.ok((await query(url, `SELECT 1 FROM ${schema}.suite_chunks WHERE blob_id = $1`, [suite.id])).length > 0);
        else assert.ok(existsSync(onDisk));
        assert.equal(await upload(server, suite.id, suite.bytes), 200, 'stored once more: nothing changes');
        const repaired = await runVersion(server, suite.id);
        assert.equal(repaired.status, 'SUCCESS', repaired.member.error ?? '');
      } finally {
        await server.stop();
        if (url) await dropSchemas(url, [schema]);
      }
    });
  });
}
