/**
 * Labels over real HTTP: a set's CI context round-trips through create,
 * details and "run again", filters the list, takes part in idempotency's body
 * comparison, and a bad label is a clear 400; a body without labels is the seed's.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertNoLeakedServers, startRunset, type RunningServer } from '../helpers/server.js';

const CONFIG = `
environments:
  staging:
tests:
  - name: quick
    type: command
    run: [node, -e, "0"]
`;

interface Problem {
  code: string;
  detail: string;
}

describe('labels', () => {
  let server: RunningServer;
  before(async () => {
    server = await startRunset({ config: CONFIG });
  });
  after(async () => {
    await server.stop();
    assertNoLeakedServers();
  });

  const create = (body: unknown, headers: Record<string, string> = {}) => api<{ testRunSetId: string } & Problem>(server, 'POST', '/v0/test-run-sets', { body, headers });
  const details = async (id: string) => (await api<{ labels: Record<string, string> }>(server, 'GET', `/v0/test-run-sets/${id}/details`)).body.labels;
  const listed = async (query: string) => (await api<{ testRunSets: Array<{ id: string }> }>(server, 'GET', `/v0/test-run-sets?${query}`)).body.testRunSets.map((s) => s.id);

  test('round-trip, filter, run again', async () => {
    const labels = { ci: 'github', branch: 'main', commit: 'a1b2c3', pipeline: 'https://github.com/acme/shop/actions/runs/9' };
    const main = (await create({ env: 'staging', labels })).body.testRunSetId;
    const feature = (await create({ env: 'staging', labels: { ci: 'github', branch: 'feature/x' } })).body.testRunSetId;
    const plain = (await create({ env: 'staging' })).body.testRunSetId;
    assert.deepEqual(await details(main), labels);
    assert.deepEqual(await details(plain), {});

    assert.deepEqual(await listed('label=branch:main'), [main]);
    assert.deepEqual(await listed('label=ci:github'), [feature, main]);
    assert.deepEqual(await listed('label=ci:github&label=branch:feature/x'), [feature]);
    assert.deepEqual(await listed(`label=${encodeURIComponent('pipeline:https://github.com/acme/shop/actions/runs/9')}`), [main], 'a value may hold ":"');
    const bad = await api<Problem>(server, 'GET', '/v0/test-run-sets?label=branch');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'invalid_query');
    assert.match(bad.body.detail, /key:value/);

    const again = await api<{ testRunSetId: string }>(server, 'POST', `/v0/test-run-sets/${main}/rerun`);
    assert.equal(again.status, 200);
    assert.deepEqual(await details(again.body.testRunSetId), labels, 'run again keeps them');
  });

  test('labels are part of the body an Idempotency-Key compares', async () => {
    const headers = { 'idempotency-key': `labels-${Date.now()}` };
    const first = await create({ env: 'staging', labels: { commit: 'aaa' } }, headers);
    const replay = await create({ env: 'staging', labels: { commit: 'aaa' } }, headers);
    assert.equal(replay.body.testRunSetId, first.body.testRunSetId);
    const other = await create({ env: 'staging', labels: { commit: 'bbb' } }, headers);
    assert.equal(other.status, 422);
  });

  test('a bad label is a clear 400 that says what is accepted', async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ Branch: 'x' }, 'unknown_field', /Branch/],
      [{ branch: 'x'.repeat(257) }, 'invalid_body', /labels.*256 characters/],
      [Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])), 'invalid_body', /labels.*at most 20/],
      [{ branch: 7 }, 'invalid_body', /labels.*string/],
      ['main', 'invalid_body', /labels must be object/],
    ];
    for (const [labels, code, expected] of cases) {
      const res = await create({ env: 'staging', labels });
      assert.equal(res.status, 400, JSON.stringify(labels).slice(0, 80));
      assert.equal(res.body.code, code, res.body.detail);
      assert.match(res.body.detail, expected);
    }
    const unknown = await create({ env: 'staging', label: { branch: 'x' } });
    assert.equal(unknown.status, 400, 'every other unknown field stays refused');
  });
});
