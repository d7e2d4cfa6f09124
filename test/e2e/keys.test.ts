/**
 * `runset keys` against a running server: a new key works and a revoked one
 * stops working within a second; tokens are never listed or logged.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, CLI, startRunset } from '../helpers/server.js';

after(() => assertNoLeakedServers());

function keys(dataDir: string, ...args: string[]) {
  const res = spawnSync(process.execPath, [CLI, 'keys', ...args, '--data-dir', dataDir], { encoding: 'utf8', timeout: 15_000 });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

test('create, use, list and revoke keys on a running server', async () => {
  const server = await startRunset({ config: 'environments:\n  local: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n' });
  try {
    const created = keys(server.dataDir, 'create', '--name', 'ci pipeline');
    assert.equal(created.code, 0, created.stderr);
    const token = created.stdout.trim();
    assert.match(token, /^rs_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.stdout, `${token}\n`, 'stdout holds only the token');

    const client = { url: server.url, apiKey: token };
    assert.equal((await api(client, 'POST', '/v0/test-run-sets', { body: { env: 'local' } })).status, 200);

    const listed = keys(server.dataDir, 'list');
    assert.equal(listed.code, 0);
    assert.ok(!listed.stdout.includes(token), 'list never shows a token');
    const line = listed.stdout.split('\n').find((l) => l.includes('"ci pipeline"'));
    assert.ok(line, listed.stdout);
    const id = line.split(/\s+/)[0]!;
    const json = JSON.parse(keys(server.dataDir, 'list', '--json').stdout) as Array<{ id: string; revokedAt: string | null }>;
    assert.equal(json.find((k) => k.id === id)?.revokedAt, null);

    assert.equal(keys(server.dataDir, 'revoke', id).code, 0);
    await new Promise((r) => setTimeout(r, 1000));
    const after = await api(client, 'GET', '/v0/test-run-sets/00000000-0000-4000-8000-000000000000');
    assert.equal(after.status, 401, 'a revoked key stops working within a second');
    assert.ok(keys(server.dataDir, 'list').stdout.includes('revoked=2'), 'list shows the revocation time');

    const unknown = keys(server.dataDir, 'revoke', '00000000-0000-4000-8000-000000000000');
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /no key with id/);

    const db = readdirSync(server.dataDir).filter((f) => f.startsWith('runset.db'));
    for (const f of db) assert.ok(!readFileSync(path.join(server.dataDir, f)).includes(token), `token not stored in ${f}`);
  } finally {
    await server.stop();
  }
  assert.ok(!server.logs().includes(server.apiKey));
});

test('keys create --role --env --expires: the key is limited at once; list shows role, envs and expiry', async () => {
  const server = await startRunset({
    config: 'environments:\n  staging: { variables: {} }\n  preview: { variables: {} }\ntests:\n  - { name: ok, type: command, run: ["true"] }\n',
  });
  try {
    const created = keys(server.dataDir, 'create', '--name', 'preview reader', '--role', 'read', '--env', 'preview', '--expires', '30d');
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stderr, /role read, envs preview, expires 20\d\d-/);
    const reader = { url: server.url, apiKey: created.stdout.trim() };
    const refused = await api<{ code: string; detail: string }>(reader, 'POST', '/v0/test-run-sets', { body: { env: 'preview' } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'forbidden');
    const line = keys(server.dataDir, 'list').stdout.split('\n').find((l) => l.includes('"preview reader"'))!;
    assert.match(line, /role=read {2}envs=preview {2}expires=20\d\d-/);
    assert.match(keys(server.dataDir, 'list').stdout, /role=admin {2}envs=\* {2}expires=-/, 'the bootstrap key: admin, every environment');
    const json = JSON.parse(keys(server.dataDir, 'list', '--json').stdout) as Array<{ name: string; role: string; envs: string[] | null; expiresAt: string | null }>;
    const listed = json.find((k) => k.name === 'preview reader')!;
    assert.deepEqual([listed.role, listed.envs], ['read', ['preview']]);
    const days = (Date.parse(listed.expiresAt!) - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, `${days} days`);

    const badRole = keys(server.dataDir, 'create', '--name', 'x', '--role', 'owner');
    assert.notEqual(badRole.code, 0);
    assert.match(badRole.stderr, /--role "owner" is not a role; use one of read, trigger, admin/);
    const badExpiry = keys(server.dataDir, 'create', '--name', 'x', '--expires', 'someday');
    assert.notEqual(badExpiry.code, 0);
    assert.match(badExpiry.stderr, /invalid duration "someday".*d \(e\.g\./);
    const badEnv = keys(server.dataDir, 'create', '--name', 'x', '--env', 'a,,b');
    assert.match(badEnv.stderr, /--env "a,,b" must be environment names separated by commas/);
  } finally {
    await server.stop();
  }
});
