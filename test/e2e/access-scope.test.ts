/**
 * Keys limited to environments, expiry and the keys API, over real HTTP on
 * every store: a set of another environment is answered exactly as a set that
 * does not exist (status, members, details, artifacts, cancel, run again),
 * lists show only allowed environments, creating elsewhere is 403; an expired
 * key is refused like a revoked one; keys made over the API work with their
 * role at once and never grant more than their maker.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { leaseOf } from '../../src/store/store.js';
import { createKey } from '../../src/auth/keys.js';
import { startAccessServer, storeKinds, type AccessServer } from './access-fixture.js';

type Problem = { code: string; title: string; status: number; detail: string };

for (const kind of storeKinds()) {
  describe(`keys limited to environments (${kind})`, () => {
    let server: AccessServer;
    let admin: string;
    let stagingOnly: string;
    let staging: string;
    let preview: string;
    let previewArtifact: string;

    before(async () => {
      server = await startAccessServer(kind);
      admin = await server.key({ role: 'admin' });
      stagingOnly = await server.key({ role: 'trigger', envs: ['staging'] });
      const create = async (env: string) => (await server.call<{ testRunSetId: string }>(admin, 'POST', '/v0/test-run-sets', { env })).body.testRunSetId;
      // Members are claimed in creation order: the first preview set's runs on worker w1 (what
      // GET /workers shows), the second's ends with an artifact (what GET /artifacts serves).
      preview = await create('preview');
      const previewEnded = await create('preview');
      staging = await create('staging');
      await server.store.workers.register({ id: 'w1', host: 'h', pid: 1, slots: 2 });
      const [running, ended] = await server.store.claims.claimRuns({ workerId: 'w1', limit: 2, leaseMs: 60_000 });
      assert.deepEqual([running?.setId, ended?.setId], [preview, previewEnded]);
      previewArtifact = randomUUID();
      const artifact = { id: previewArtifact, name: 'preview.png', contentType: 'image/png', size: 14, location: 'b' };
      assert.ok(await server.store.claims.finishRun(leaseOf(ended!), { status: 'FAIL', attempts: 1, error: 'x', output: '', durationMs: 1, artifacts: [artifact] }));
    });
    after(async () => {
      await server?.close();
    });

    test('a set of another environment is 404 exactly as a set that does not exist, on every path', async () => {
      const unknown = randomUUID();
      for (const suffix of ['', '/test-runs', '/details']) {
        const hidden = await server.call<Problem>(stagingOnly, 'GET', `/v0/test-run-sets/${preview}${suffix}`);
        const absent = await server.call<Problem>(stagingOnly, 'GET', `/v0/test-run-sets/${unknown}${suffix}`);
        assert.equal(hidden.status, 404, `GET …${suffix}`);
        assert.deepEqual({ ...hidden.body, detail: hidden.body.detail.replace(preview, 'ID') }, { ...absent.body, detail: absent.body.detail.replace(unknown, 'ID') });
        assert.equal((await server.call(stagingOnly, 'GET', `/v0/test-run-sets/${staging}${suffix}`)).status, 200, `own set, GET …${suffix}`);
      }
      for (const action of ['cancel', 'rerun']) {
        const hidden = await server.call<Problem>(stagingOnly, 'POST', `/v0/test-run-sets/${preview}/${action}`);
        assert.equal(hidden.status, 404, action);
        assert.equal(hidden.body.code, 'not_found');
      }
      assert.equal((await server.store.sets.control(preview))?.cancellation, null, 'a hidden set is not cancelled');
      const deliveries = await server.call<Problem>(stagingOnly, 'GET', `/v0/webhook-deliveries?setId=${preview}`);
      assert.equal(deliveries.status, 404, 'webhook deliveries of a hidden set');
      assert.equal((await server.call(admin, 'GET', `/v0/webhook-deliveries?setId=${preview}`)).status, 200);
      const artifact = await server.call<Problem>(stagingOnly, 'GET', `/v0/artifacts/${previewArtifact}`);
      assert.equal(artifact.status, 404);
      assert.equal(artifact.body.code, 'not_found');
      assert.equal((await server.call(admin, 'GET', `/v0/artifacts/${previewArtifact}`)).status, 200, 'the admin key gets it');
    });

    test('lists show only allowed environments', async () => {
      type Page = { testRunSets: Array<{ id: string; env: string }> };
      const list = await server.call<Page>(stagingOnly, 'GET', '/v0/test-run-sets');
      assert.deepEqual(list.body.testRunSets.map((s) => s.env), ['staging']);
      assert.deepEqual((await server.call<Page>(stagingOnly, 'GET', '/v0/test-run-sets?env=preview')).body.testRunSets, []);
      assert.equal((await server.call<Page>(admin, 'GET', '/v0/test-run-sets')).body.testRunSets.length, 3);
      const envs = await server.call<{ environments: Array<{ name: string }> }>(stagingOnly, 'GET', '/v0/environments');
      assert.deepEqual(envs.body.environments.map((e) => e.name), ['staging']);
      type Workers = { workers: Array<{ id: string; running: Array<{ setId: string }> }> };
      const seenByAdmin = await server.call<Workers>(admin, 'GET', '/v0/workers');
      const seenByScoped = await server.call<Workers>(stagingOnly, 'GET', '/v0/workers');
      const running = (w: Workers) => w.workers.flatMap((x) => x.running.map((m) => m.setId));
      assert.ok(seenByScoped.body.workers.some((w) => w.id === 'w1'), 'the worker itself is listed');
      assert.ok(!running(seenByScoped.body).includes(preview));
      assert.ok(running(seenByAdmin.body).includes(preview), 'an unscoped key sees it');
    });

    test('creating a set in another environment is 403 saying where the key may', async () => {
      const refused = await server.call<Problem>(stagingOnly, 'POST', '/v0/test-run-sets', { env: 'preview' });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, 'forbidden');
      assert.match(refused.body.detail, /may not create sets in environment preview.*only in environment staging/);
      assert.equal((await server.call(stagingOnly, 'POST', '/v0/test-run-sets', { env: 'staging' })).status, 200);
    });

    test('an expired key is refused like a revoked one, by Bearer and at sign-in', async () => {
      const expired = await server.key({ role: 'admin', expiresAt: new Date(Date.now() - 1000).toISOString() });
      const live = await server.key({ role: 'read', expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
      const { token: revoked, key } = await createKey(server.store, 'revoked', { role: 'admin' });
      await server.store.keys.revoke(key.id);
      const asExpired = await server.call<Problem>(expired, 'GET', `/v0/test-run-sets/${staging}`);
      const asRevoked = await server.call<Problem>(revoked, 'GET', `/v0/test-run-sets/${staging}`);
      assert.equal(asExpired.status, 401);
      assert.deepEqual(asExpired.body, asRevoked.body);
      assert.equal((await server.call(live, 'GET', `/v0/test-run-sets/${staging}`)).status, 200);
      const signIn = await server.call<Problem>(null, 'POST', '/v0/session', { key: expired });
      assert.equal(signIn.status, 401);
    });

    test('keys API: an admin makes a key (token once), it works with its role at once, and is revoked', async () => {
      const made = await server.call<{ key: { id: string; role: string; envs: string[] | null; expiresAt: string }; token: string }>(admin, 'POST', '/v0/keys', {
        name: 'ci preview',
        role: 'read',
        envs: ['preview'],
        expires: '90d',
      });
      assert.equal(made.status, 201, made.text);
      assert.match(made.body.token, /^rs_[A-Za-z0-9_-]{43}$/);
      assert.deepEqual([made.body.key.role, made.body.key.envs], ['read', ['preview']]);
      const days = (Date.parse(made.body.key.expiresAt) - Date.now()) / 86_400_000;
      assert.ok(days > 89.9 && days <= 90, `expires in ${days} days`);
      assert.equal((await server.call(made.body.token, 'GET', `/v0/test-run-sets/${preview}`)).status, 200);
      assert.equal((await server.call(made.body.token, 'GET', `/v0/test-run-sets/${staging}`)).status, 404);
      assert.equal((await server.call(made.body.token, 'POST', '/v0/test-run-sets', { env: 'preview' })).status, 403);

      const listed = await server.call<{ keys: Array<{ id: string; role: string }> }>(admin, 'GET', '/v0/keys');
      assert.equal(listed.body.keys.find((k) => k.id === made.body.key.id)?.role, 'read');
      assert.ok(!listed.text.includes(made.body.token), 'a list never holds a token');
      const stored = JSON.stringify(await server.store.keys.list());
      assert.ok(!stored.includes(made.body.token));

      assert.equal((await server.call(admin, 'DELETE', `/v0/keys/${made.body.key.id}`)).status, 204);
      assert.equal((await server.call(made.body.token, 'GET', `/v0/test-run-sets/${preview}`)).status, 401);
      assert.ok(!server.logs().includes(made.body.token), 'the token is never logged');
    });

    test('keys API: bad input names what is accepted', async () => {
      const cases: Array<[unknown, number, RegExp]> = [
        [{ name: 'x', role: 'owner' }, 400, /role/],
        [{ name: 'x', envs: ['nowhere'] }, 400, /nowhere.*known environments: staging, preview/],
        [{ name: 'x', expires: 'soon' }, 400, /expires.*90d|expires.*d \(e\.g\./],
        [{ name: 'x', extra: 1 }, 400, /extra/],
      ];
      for (const [body, status, detail] of cases) {
        const res = await server.call<Problem>(admin, 'POST', '/v0/keys', body);
        assert.equal(res.status, status, `${JSON.stringify(body)}: ${res.text}`);
        assert.match(res.body.detail, detail, JSON.stringify(body));
      }
    });

    test('an admin limited to environments makes, sees and revokes only keys within them', async () => {
      const scopedAdmin = await server.key({ role: 'admin', envs: ['staging'] });
      const wider = await server.call<Problem>(scopedAdmin, 'POST', '/v0/keys', { name: 'everything', role: 'read' });
      assert.equal(wider.status, 403);
      assert.match(wider.body.detail, /limited to its own environments \(staging\)/);
      const inside = await server.call<{ key: { id: string } }>(scopedAdmin, 'POST', '/v0/keys', { name: 'staging reader', role: 'read', envs: ['staging'] });
      assert.equal(inside.status, 201);
      const listed = await server.call<{ keys: Array<{ id: string; envs: string[] | null }> }>(scopedAdmin, 'GET', '/v0/keys');
      assert.ok(listed.body.keys.length > 0);
      assert.ok(listed.body.keys.every((k) => k.envs !== null && k.envs.every((e) => e === 'staging')));
      const unscopedId = (await server.store.keys.list()).find((k) => k.envs === null)!.id;
      assert.equal((await server.call(scopedAdmin, 'DELETE', `/v0/keys/${unscopedId}`)).status, 404);
      assert.equal((await server.store.keys.list()).find((k) => k.id === unscopedId)?.revokedAt, null);
      assert.equal((await server.call(scopedAdmin, 'DELETE', `/v0/keys/${inside.body.key.id}`)).status, 204);
    });
  });
}

describe('sign-in abuse', () => {
  let server: AccessServer;
  before(async () => {
    server = await startAccessServer('sqlite', { signInsPerMinute: 3 });
  });
  after(async () => {
    await server?.close();
  });

  test('sign-in is limited per client address (429, Retry-After) and a refused one is logged without the key', async () => {
    const tried = `rs_${'Q'.repeat(43)}`;
    for (let i = 0; i < 3; i++) assert.equal((await server.call(null, 'POST', '/v0/session', { key: tried })).status, 401);
    const limited = await server.call<Problem>(null, 'POST', '/v0/session', { key: await server.key({ role: 'read' }) });
    assert.equal(limited.status, 429, 'a right key after the limit is refused too');
    assert.equal(limited.body.code, 'rate_limited');
    assert.match(limited.body.detail, /at most 3 sign-in attempts per minute/);
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    const refusals = server.logs().split('\n').filter((l) => l.includes('sign-in refused'));
    assert.equal(refusals.length, 3);
    for (const line of refusals) assert.match(line, /"address":"127\.0\.0\.1"/);
    assert.ok(!server.logs().includes(tried), 'the key tried is not logged');
    assert.ok(!server.logs().includes('Q'.repeat(8)), 'nor any part of it');
  });
});
