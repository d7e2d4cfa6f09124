/**
 * The worker protocol's boundaries, tried as an attacker holding a worker key
 * of another environment would (`serve --no-workers` on SQLite; the store parts
 * — the registry's binding to keys, what a version ran in — are in the store
 * contract on both stores). Each of these was reproduced before the fix:
 *
 * - a lease of environment B's member, named by a key of environment A
 *   (finish, heartbeat, start, release, finish-and-claim), changed B's member;
 * - an upload to B's artifact id replaced its bytes;
 * - a key removed another key's worker from the registry;
 * - a key fetched a suite version only B's sets ran;
 * - a claim held across a revoke answered members of a set made after it,
 *   secrets in clear, and a notices stream outlived its key;
 * - a durationMs of 1e308 was stored.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makeArchive } from '../helpers/suite-archive.js';
import { api, assertNoLeakedServers, startRunset, waitForSet, type RunningServer } from '../helpers/server.js';

const SECRET_B = `b-secret-${process.pid}-${Date.now()}`;
const SECRET_A = `a-secret-${process.pid}-${Date.now()}`;

const CONFIG = `
environments:
  alpha: { variables: { A_SECRET: "\${env:WB_A_SECRET}" } }
  beta: { allowSuiteUploads: true, variables: { B_SECRET: "\${env:WB_B_SECRET}" } }
  gamma: { variables: { A_SECRET: "\${env:WB_A_SECRET}" } }
tests:
  - { name: a test, type: command, run: ["true"], environments: [alpha] }
  - { name: b test, type: command, run: ["true"], environments: [beta] }
  - { name: g test, type: command, run: ["true"], environments: [gamma] }
`;

interface Claimed {
  id: string;
  setId: string;
  claim: number;
  workerId: string;
  leaseToken: string;
  variables: Record<string, { value: string; secret: boolean }>;
}
type Lease = { runId: string; workerId: string; claim: number; token?: string };

const OUTCOME = { status: 'SUCCESS', attempts: 1, error: null, output: 'forged', durationMs: 5 };

describe('a worker key acts only inside its environments', () => {
  let server: RunningServer;
  let keyA: { id: string; token: string };
  let keyB: { id: string; token: string };
  const as = (key: { token: string }) => ({ url: server.url, apiKey: key.token });

  before(async () => {
    server = await startRunset({ config: CONFIG, args: ['--no-workers'], env: { WB_A_SECRET: SECRET_A, WB_B_SECRET: SECRET_B } });
    const make = async (envs: string[]) => {
      const res = await api<{ key: { id: string }; token: string }>(server, 'POST', '/v0/keys', { body: { name: `worker ${envs[0]}`, role: 'worker', envs } });
      assert.equal(res.status, 201, res.text);
      return { id: res.body.key.id, token: res.body.token };
    };
    keyA = await make(['alpha']);
    keyB = await make(['beta']);
  });
  after(async () => {
    await server.stop();
    assertNoLeakedServers();
  });

  async function claimOne(env: string, key: { token: string }, workerId: string): Promise<Claimed> {
    const created = await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env } });
    assert.equal(created.status, 200, created.text);
    for (let i = 0; i < 50; i++) {
      const res = await api<{ runs: Claimed[] }>(as(key), 'POST', '/v0/worker/claims', { body: { workerId, limit: 1, leaseMs: 60_000 } });
      assert.equal(res.status, 200, res.text);
      const run = res.body.runs.find((r) => r.setId === created.body.testRunSetId);
      if (run) return run;
    }
    throw new Error('nothing claimed');
  }

  const member = async (setId: string) =>
    (await api<{ testRuns: Array<{ status: string; workerId: string | null; output: string | null; attempts: number }> }>(server, 'GET', `/v0/test-run-sets/${setId}/test-runs`)).body.testRuns[0]!;

  test('another environment\'s lease, with or without its ticket, is 404 on every lease route, and nothing changes', async () => {
    const b = await claimOne('beta', keyB, 'worker-b');
    assert.match(b.leaseToken, /\./, 'a claim answers the lease\'s ticket');
    const stolen: Lease = { runId: b.id, workerId: b.workerId, claim: b.claim, token: b.leaseToken };
    const guessed: Lease = { ...stolen, token: `${b.leaseToken.slice(0, -2)}xx` };
    for (const lease of [stolen, guessed]) {
      const run = { setId: b.setId, env: 'alpha', name: 'a test' };
      const attempts = [
        ['/v0/worker/leases/finish', { lease, outcome: OUTCOME, run }],
        ['/v0/worker/leases/heartbeat', { lease, leaseMs: 3_600_000, attempts: 7 }],
        ['/v0/worker/leases/start', { lease }],
        ['/v0/worker/leases/release', { leases: [lease] }],
        ['/v0/worker/leases/finish-and-claim', { lease, outcome: OUTCOME, run, next: { workerId: 'worker-a', limit: 0, leaseMs: 1000 } }],
      ] as const;
      for (const [route, body] of attempts) {
        const res = await api(as(keyA), 'POST', route, { body });
        assert.equal(res.status, 404, `${route}: ${res.text}`);
      }
    }
    // Without a ticket the body is not even a lease.
    const bare = await api(as(keyA), 'POST', '/v0/worker/leases/heartbeat', { body: { lease: { runId: b.id, workerId: b.workerId, claim: b.claim }, leaseMs: 1000, attempts: 1 } });
    assert.equal(bare.status, 400);
    const after = await member(b.setId);
    assert.deepEqual([after.status, after.workerId, after.attempts], ['RUNNING', 'worker-b', 0], 'B\'s member is untouched');

    // The claimer finishes it; the body's set and environment are not what is believed: the ticket's are.
    const own: Lease = { runId: b.id, workerId: b.workerId, claim: b.claim, token: b.leaseToken };
    const finished = await api(as(keyB), 'POST', '/v0/worker/leases/finish', { body: { lease: own, outcome: { ...OUTCOME, output: 'real' }, run: { setId: b.setId, env: 'alpha', name: 'a test' } } });
    assert.equal(finished.status, 204, finished.text);
    assert.equal((await waitForSet(server, b.setId)).status, 'SUCCESS');
    // Its 5 ms went into beta's history of "b test" (written within a second), not alpha's "a test".
    await new Promise((r) => setTimeout(r, 1_500));
    const expected = async (env: string) => {
      const created = await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env } });
      return (await api<{ testRuns: Array<{ expectedMs: number | null }> }>(server, 'GET', `/v0/test-run-sets/${created.body.testRunSetId}/test-runs`)).body.testRuns[0]!.expectedMs;
    };
    assert.equal(await expected('beta'), 5);
    assert.notEqual(await expected('alpha'), 5);
  });

  test('an upload never replaces another member\'s bytes, and a remove reaches only one\'s own', async () => {
    const b = await claimOne('beta', keyB, 'worker-b2');
    const lease: Lease = { runId: b.id, workerId: b.workerId, claim: b.claim, token: b.leaseToken };
    const artifactId = '6f1c0c1e-9a43-4f5b-9a41-1d3c2f0e7a11';
    const put = (key: { token: string }, bytes: string) =>
      fetch(`${server.url}/v0/worker/artifacts/${artifactId}`, { method: 'PUT', headers: { authorization: `Bearer ${key.token}`, 'content-type': 'application/octet-stream' }, body: bytes });
    const stored = (await (await put(keyB, 'the real screenshot')).json()) as { location: string; size: number };
    const artifacts = [{ id: artifactId, name: 'shot.png', contentType: 'image/png', size: stored.size, location: stored.location }];
    const done = await api(as(keyB), 'POST', '/v0/worker/leases/finish', { body: { lease, outcome: { ...OUTCOME, output: 'ok', artifacts }, run: { setId: b.setId, env: 'beta', name: 'b test' } } });
    assert.equal(done.status, 204, done.text);

    const forged = await put(keyA, 'forged bytes');
    assert.equal(forged.status, 200);
    const forgedAt = ((await forged.json()) as { location: string }).location;
    assert.equal((await api(as(keyA), 'POST', '/v0/worker/artifacts/remove', { body: { locations: [forgedAt] } })).status, 204);
    const download = await fetch(`${server.url}/v0/artifacts/${artifactId}`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    assert.equal(download.status, 200);
    assert.equal(await download.text(), 'the real screenshot');
  });

  test('a worker id belongs to the key that registered it', async () => {
    const worker = { id: 'host-b/42/abc', host: 'host-b', pid: 42, slots: 2 };
    assert.equal((await api(as(keyB), 'POST', '/v0/worker/workers', { body: worker })).status, 204);
    assert.equal((await api(as(keyA), 'POST', '/v0/worker/workers', { body: { ...worker, slots: 64 } })).status, 404);
    assert.deepEqual((await api(as(keyA), 'POST', '/v0/worker/workers/heartbeat', { body: { id: worker.id } })).body, { alive: false });
    assert.equal((await api(as(keyA), 'POST', '/v0/worker/workers/remove', { body: { id: worker.id } })).status, 204);
    const listed = await api<{ workers: Array<{ id: string; slots: number }> }>(server, 'GET', '/v0/workers');
    assert.deepEqual(listed.body.workers.filter((w) => w.id === worker.id).map((w) => w.slots), [2], 'still there, as B registered it');
    assert.deepEqual((await api(as(keyB), 'POST', '/v0/worker/workers/heartbeat', { body: { id: worker.id } })).body, { alive: true });
    assert.equal((await api(as(keyB), 'POST', '/v0/worker/workers/remove', { body: { id: worker.id } })).status, 204);
  });

  test('a suite version is fetched only by keys of an environment whose sets ran it', async () => {
    const version = await makeArchive({ 'runset.config.yaml': 'tests:\n  - { name: uploaded, type: command, run: ["true"] }\n' });
    const pushed = await fetch(`${server.url}/v0/suites/${version.id}`, { method: 'PUT', headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/gzip' }, body: version.bytes });
    assert.ok(pushed.status === 200 || pushed.status === 201, await pushed.text());
    const created = await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env: 'beta', suite: version.id } });
    assert.equal(created.status, 200, created.text);
    const fetchAs = (key: { token: string }) => fetch(`${server.url}/v0/worker/suites/${version.id}`, { headers: { authorization: `Bearer ${key.token}` } });
    assert.equal((await fetchAs(keyA)).status, 404);
    const byB = await fetchAs(keyB);
    assert.equal(byB.status, 200);
    assert.equal(Buffer.from(await byB.arrayBuffer()).equals(version.bytes), true);
  });

  test('a claim held across a revoke answers 401 and takes nothing; a notices stream ends within a second', async () => {
    const made = await api<{ key: { id: string }; token: string }>(server, 'POST', '/v0/keys', { body: { name: 'soon revoked', role: 'worker', envs: ['gamma'] } });
    const doomed = { id: made.body.key.id, token: made.body.token };
    const notices = await fetch(`${server.url}/v0/worker/notices`, { headers: { authorization: `Bearer ${doomed.token}` } });
    assert.equal(notices.status, 200);
    const streamEnded = (async () => {
      const reader = notices.body!.getReader();
      try {
        while (!(await reader.read()).done);
      } catch {
        // a reset ends it too
      }
      return Date.now();
    })();
    const held = api<{ runs?: Claimed[] }>(as(doomed), 'POST', '/v0/worker/claims', { body: { workerId: 'doomed', limit: 5, leaseMs: 60_000, waitMs: 20_000 } });
    await new Promise((r) => setTimeout(r, 300));
    const revokedAt = Date.now();
    assert.equal((await api(server, 'DELETE', `/v0/keys/${doomed.id}`)).status, 204);
    const created = await api<{ testRunSetId: string }>(server, 'POST', '/v0/test-run-sets', { body: { env: 'gamma' } });
    const answer = await held;
    assert.equal(answer.status, 401, answer.text);
    assert.ok(!answer.text.includes(SECRET_A), 'no secret leaves for a revoked key');
    assert.ok((await streamEnded) - revokedAt < 2_000, 'the notices stream ended');
    // The member was not taken: a live key claims it.
    const run = (await api<{ runs: Claimed[] }>(server, 'POST', '/v0/worker/claims', { body: { workerId: 'admin-worker', limit: 5, leaseMs: 60_000 } })).body.runs.find((r) => r.setId === created.body.testRunSetId);
    assert.ok(run, 'the set made after the revoke waits for a live key');
    assert.equal(run.variables.A_SECRET?.secret, true);
  });

  test('numbers a worker sends are bounded', async () => {
    const a = await claimOne('alpha', keyA, 'worker-a2');
    const lease: Lease = { runId: a.id, workerId: a.workerId, claim: a.claim, token: a.leaseToken };
    const run = { setId: a.setId, env: 'alpha', name: 'a test' };
    for (const outcome of [{ ...OUTCOME, durationMs: 1e308 }, { ...OUTCOME, attempts: 1e9 }]) {
      const res = await api<{ detail: string }>(as(keyA), 'POST', '/v0/worker/leases/finish', { body: { lease, outcome, run } });
      assert.equal(res.status, 400, res.text);
    }
    assert.equal((await api(as(keyA), 'POST', '/v0/worker/leases/start', { body: { lease, sinceMs: 1e300 } })).status, 400);
    assert.equal((await member(a.setId)).status, 'RUNNING', 'nothing was written');
  });
});
