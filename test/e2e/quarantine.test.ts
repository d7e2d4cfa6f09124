/**
 * Quarantine and failOnFlaky over real HTTP, on SQLite and (when
 * RUNSET_TEST_DATABASE_URL is set) PostgreSQL, as a user drives them:
 * `runset quarantine add|list|remove` and the API; a set whose only failing
 * test is quarantined passes with the failure counted and marked (members
 * list, CLI summary, JUnit); a rerun of its failures keeps the mark; ending
 * the quarantine makes the next set fail again; bad input is a clear 400/404/
 * 403. Under failOnFlaky a test that passed only on its retry fails the set,
 * unless it is quarantined.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { api, assertNoLeakedServers, startRunset, waitForSet, type RunningServer } from '../helpers/server.js';
import { servedStores } from '../helpers/postgres.js';
import { runTriggerCommand } from '../../src/cli/trigger.js';
import { runQuarantineAdd, runQuarantineList, runQuarantineRemove } from '../../src/cli/quarantine.js';

/** `flaky` fails its first attempt and passes its retry: a marker file per MARK says which attempt this is. */
const FLAKY = "const f = require('path').join(require('os').tmpdir(), 'runset-flaky-' + process.env.MARK); if (!require('fs').existsSync(f)) { require('fs').writeFileSync(f, ''); process.exit(1) }";
const CONFIG = `
environments:
  staging: {}
  strict:
    failOnFlaky: true
    variables:
      MARK: none
tests:
  - { name: passes, type: command, run: [node, -e, "0"] }
  - { name: known-broken, type: command, run: [node, -e, "console.log('expected 3 items, got 2'); process.exit(3)"], environments: [staging] }
  - { name: flaky, type: command, run: [node, -e, ${JSON.stringify(FLAKY)}], retries: 1, environments: [strict] }
`;

type Member = { name: string; status: string; quarantined: boolean; flaky: boolean };

const STORES = servedStores('runset_quarantine');

function capture() {
  const io = { out: '', err: '', stdout: { write: (text: string) => void (io.out += text) }, stderr: { write: (text: string) => void (io.err += text) } };
  return io;
}

for (const [storeName, database] of STORES) {
  describe(`quarantine and failOnFlaky (${storeName})`, () => {
    const db = database();
    let server: RunningServer | undefined;
    let dir: string | undefined;
    after(async () => {
      await server?.stop();
      await db.drop();
      if (dir) await rm(dir, { recursive: true, force: true });
      assertNoLeakedServers();
    });

    const env = () => ({ RUNSET_URL: server!.url, RUNSET_API_KEY: server!.apiKey });
    const members = async (id: string) =>
      (await api<{ testRuns: Member[] }>(server!, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns.sort((a, b) => a.name.localeCompare(b.name));
    const details = async (id: string) => (await api<{ failing: number }>(server!, 'GET', `/v0/test-run-sets/${id}/details`)).body;
    async function trigger(argv: string[]) {
      const io = capture();
      const code = await runTriggerCommand([...argv, '--no-ci-labels', '--wait', '--interval', '250ms'], env(), io);
      const id = /created test run set (\S+)/.exec(io.err)?.[1] ?? '';
      return { code, id, out: io.out, err: io.err };
    }

    test('a quarantined failure is counted and marked but does not fail the set, until the quarantine ends', { timeout: 90_000 }, async () => {
      server = await startRunset({ config: CONFIG, args: db.args });
      dir = await mkdtemp(path.join(tmpdir(), 'runset-quarantine-'));
      const before = await trigger(['--env', 'staging']);
      assert.equal(before.code, 1, before.err);

      const add = capture();
      assert.equal(await runQuarantineAdd('known-broken', { env: 'staging', reason: 'cart count, issue #12', until: 2 * 86_400_000 }, env(), add), 0, add.err);
      assert.match(add.err, /quarantined "known-broken" in staging until \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
      assert.doesNotMatch(add.err, /warning/, 'a test that has run is known');
      const typo = capture();
      assert.equal(await runQuarantineAdd('known-brokn', { env: 'staging', reason: 'typo' }, env(), typo), 0);
      assert.match(typo.err, /warning: no test named "known-brokn" has run in staging/);
      const listed = capture();
      assert.equal(await runQuarantineList({ env: 'staging' }, env(), listed), 0);
      assert.match(listed.out, /^ENV +TEST +UNTIL \(UTC\) +BY +REASON/);
      assert.match(listed.out, /staging +known-broken +\S+ \S+ +bootstrap +cart count, issue #12/);
      const viaApi = await api<{ quarantine: Array<{ name: string; until: string; createdBy: { keyName: string } }> }>(server, 'GET', '/v0/quarantine?env=staging');
      assert.deepEqual(viaApi.body.quarantine.map((e) => e.name), ['known-broken', 'known-brokn']);
      const days = (Date.parse(viaApi.body.quarantine[1]!.until) - Date.now()) / 86_400_000;
      assert.ok(days > 13.9 && days <= 14, `the default is 14 days (${days})`);

      const junit = path.join(dir, 'junit.xml');
      const passing = await trigger(['--env', 'staging', '--junit', junit]);
      assert.equal(passing.code, 0, passing.err);
      assert.match(passing.err, /SUCCESS: 1 of 2 tests passed — 1 test quarantined failed/);
      assert.match(passing.err, /✗ known-broken \[command\] \(quarantined\): exited with code 3/);
      const id = passing.id;
      const status = await api<{ status: string; progress: { counts: Record<string, number> } }>(server, 'GET', `/v0/test-run-sets/${id}`);
      assert.equal(status.body.status, 'SUCCESS');
      assert.deepEqual(status.body.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 1 }, 'the counts stay the real states');
      assert.equal((await details(id)).failing, 0, 'no end failed the set');
      assert.deepEqual((await members(id)).map((m) => [m.name, m.status, m.quarantined]), [['known-broken', 'FAIL', true], ['passes', 'SUCCESS', false]]);
      const xml = await readFile(junit, 'utf8');
      assert.match(xml, /<testcase name="known-broken"[^>]*>\s*<properties>\s*<property name="quarantined" value="true"\/>\s*<\/properties>\s*<failure message="quarantined: exited with code 3/);

      const rerun = await api<{ testRunSetId: string }>(server, 'POST', `/v0/test-run-sets/${id}/rerun`, { body: { only: 'failed' } });
      assert.equal(rerun.status, 200, rerun.text);
      assert.equal((await waitForSet(server, rerun.body.testRunSetId)).status, 'SUCCESS', 'a rerun of failures keeps the quarantine in force');

      const removed = capture();
      assert.equal(await runQuarantineRemove('known-broken', 'staging', env(), removed), 0, removed.err);
      assert.match(removed.err, /quarantine of "known-broken" in staging ended/);
      const again = capture();
      assert.equal(await runQuarantineRemove('known-broken', 'staging', env(), again), 3);
      assert.match(again.err, /not quarantined in environment "staging"/);
      const after = await trigger(['--env', 'staging']);
      assert.equal(after.code, 1, 'the next set fails again');
      assert.match(after.err, /FAIL: 1 of 2 tests failed/);
    });

    test('bad input is refused with what is accepted; a read key may list but not add', async () => {
      const post = (body: unknown) => api<{ code: string; detail: string }>(server!, 'POST', '/v0/quarantine', { body });
      const past = await post({ env: 'staging', name: 'passes', reason: 'r', until: '2020-01-01T00:00:00Z' });
      assert.deepEqual([past.status, past.body.code], [400, 'invalid_until']);
      assert.match(past.body.detail, /not in the future; give a time between now and/);
      const far = await post({ env: 'staging', name: 'passes', reason: 'r', until: new Date(Date.now() + 400 * 86_400_000).toISOString() });
      assert.match(far.body.detail, /more than 365 days ahead/);
      assert.equal((await post({ env: 'nowhere', name: 'passes', reason: 'r' })).body.code, 'unknown_environment');
      assert.equal((await post({ env: 'staging', name: 'passes' })).status, 400, 'a reason is required');
      assert.equal((await post({ env: 'staging', name: 'passes', reason: 'r', owner: 'me' })).body.code, 'unknown_field');
      const gone = await api<{ code: string }>(server!, 'DELETE', '/v0/quarantine?env=staging&name=passes');
      assert.deepEqual([gone.status, gone.body.code], [404, 'not_quarantined']);
      const reader = await api<{ token: string }>(server!, 'POST', '/v0/keys', { body: { name: 'reader', role: 'read' } });
      const asReader = { auth: `Bearer ${reader.body.token}` };
      assert.equal((await api(server!, 'GET', '/v0/quarantine', asReader)).status, 200);
      assert.equal((await api(server!, 'POST', '/v0/quarantine', { ...asReader, body: { env: 'staging', name: 'passes', reason: 'r' } })).status, 403);
    });

    test('failOnFlaky: a pass on the retry fails the set and says why; quarantined, it does not', { timeout: 60_000 }, async () => {
      const flaky = await trigger(['--env', 'strict', '--override', `MARK=${randomUUID()}`]);
      assert.equal(flaky.code, 1, flaky.err);
      assert.match(flaky.err, /FAIL: 1 test passed only after a retry, and this environment fails a set on flaky tests \(failOnFlaky\)/);
      assert.deepEqual((await members(flaky.id)).map((m) => [m.name, m.status, m.flaky]), [['flaky', 'SUCCESS', true], ['passes', 'SUCCESS', false]]);
      assert.equal((await details(flaky.id)).failing, 1, 'the pass on the retry is the end that failed the set');
      assert.equal((await api(server!, 'POST', '/v0/quarantine', { body: { env: 'strict', name: 'flaky', reason: 'retries on cold start' } })).status, 201);
      const excused = await trigger(['--env', 'strict', '--override', `MARK=${randomUUID()}`]);
      assert.equal(excused.code, 0, excused.err);
    });
  });
}
