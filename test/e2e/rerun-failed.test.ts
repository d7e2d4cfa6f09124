/**
 * Rerun of failures over real HTTP, on SQLite and (when RUNSET_TEST_DATABASE_URL
 * is set) PostgreSQL: after a set with a passing command, a failing command and
 * a slow one cancelled, `{"only": "failed"}` plans exactly the failing and the
 * cancelled members, with the same selection and the label rerun-of; a set
 * still running is 409 rerun_conflict, one with nothing failed 422
 * nothing_to_rerun, and an unknown field in the body 400. `runset trigger
 * --rerun-failed ID` makes the same rerun, and reports a refusal with exit 3;
 * `--rerun-failed last` finds the newest ended set of the CI run's pipeline
 * label (a GitHub re-run attempt's included).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, assertNoLeakedServers, startRunset, waitForSet, type RunningServer } from '../helpers/server.js';
import { servedStores } from '../helpers/postgres.js';
import { until } from '../helpers/scale.js';
import { runTriggerCommand } from '../../src/cli/trigger.js';

const CONFIG = `
environments:
  staging: {}
  calm: {}
tests:
  - { name: passes, type: command, run: [node, -e, "0"] }
  - { name: fails, type: command, run: [node, -e, "process.exit(3)"], environments: [staging] }
  - { name: hangs, type: command, run: [node, -e, "setTimeout(() => {}, 60000)"], environments: [staging], timeoutSeconds: 120 }
`;

const RUN_URL = 'https://github.com/o/r/actions/runs/7';
/** What a GitHub re-run attempt's job sees: its pipeline label is RUN_URL/attempts/2. */
const SECOND_ATTEMPT = { GITHUB_ACTIONS: 'true', GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'o/r', GITHUB_RUN_ID: '7', GITHUB_RUN_ATTEMPT: '2' };

interface Answer {
  testRunSetId: string;
  code: string;
  detail: string;
}

type Member = { name: string; status: string };

const STORES = servedStores('runset_rerun');

async function trigger(server: RunningServer, argv: string[], ci: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io = { stdout: { write: (text: string) => void (out += text) }, stderr: { write: (text: string) => void (err += text) } };
  const code = await runTriggerCommand([...argv, '--no-ci-labels'], { ...ci, RUNSET_URL: server.url, RUNSET_API_KEY: server.apiKey }, io);
  return { code, out: out.trim(), err };
}

for (const [storeName, database] of STORES) {
  describe(`rerun of failures (${storeName})`, () => {
    const db = database();
    let server: RunningServer | undefined;
    after(async () => {
      await server?.stop();
      await db.drop();
      assertNoLeakedServers();
    });

    const members = async (id: string) =>
      (await api<{ testRuns: Member[] }>(server!, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns.sort((a, b) => a.name.localeCompare(b.name));
    const rerun = (id: string, body?: unknown) => api<Answer>(server!, 'POST', `/v0/test-run-sets/${id}/rerun`, body === undefined ? {} : { body });

    test('holds exactly the failing and the cancelled members; refuses a running set, a set with none failed, an unknown field', { timeout: 60_000 }, async () => {
      server = await startRunset({ config: CONFIG, args: db.args });
      const created = await api<Answer>(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', labels: { pipeline: RUN_URL }, select: { grepInvert: '^nothing$' } } });
      assert.equal(created.status, 200, created.text);
      const first = created.body.testRunSetId;
      await until('passes and fails to end while hangs runs', async () => {
        const byName = Object.fromEntries((await members(first)).map((m) => [m.name, m.status]));
        return byName.passes === 'SUCCESS' && byName.fails === 'FAIL' && byName.hangs === 'RUNNING';
      });

      const early = await rerun(first, { only: 'failed' });
      assert.equal(early.status, 409, early.text);
      assert.equal(early.body.code, 'rerun_conflict');
      assert.match(early.body.detail, /has not ended/);

      const cancelled = await api(server, 'POST', `/v0/test-run-sets/${first}/cancel`);
      assert.equal(cancelled.status, 200, cancelled.text);
      await waitForSet(server, first);

      const again = await rerun(first, { only: 'failed' });
      assert.equal(again.status, 200, again.text);
      const second = again.body.testRunSetId;
      assert.deepEqual((await members(second)).map((m) => m.name), ['fails', 'hangs']);
      const details = (await api<{ labels: Record<string, string>; select: unknown; env: string }>(server, 'GET', `/v0/test-run-sets/${second}/details`)).body;
      assert.deepEqual(details.labels, { pipeline: RUN_URL, 'rerun-of': first });
      assert.deepEqual(details.select, { grepInvert: '^nothing$' });
      assert.equal(details.env, 'staging');
      await api(server, 'POST', `/v0/test-run-sets/${second}/cancel`);

      const whole = await rerun(first);
      assert.equal(whole.status, 200, whole.text);
      assert.deepEqual((await members(whole.body.testRunSetId)).map((m) => m.name), ['fails', 'hangs', 'passes']);
      await api(server, 'POST', `/v0/test-run-sets/${whole.body.testRunSetId}/cancel`);

      const unknownField = await rerun(first, { only: 'failed', also: 1 });
      assert.equal(unknownField.status, 400, unknownField.text);
      const badValue = await rerun(first, { only: 'passed' });
      assert.equal(badValue.status, 400, badValue.text);

      const calm = await api<Answer>(server, 'POST', '/v0/test-run-sets', { body: { env: 'calm' } });
      assert.equal((await waitForSet(server, calm.body.testRunSetId)).status, 'SUCCESS');
      const none = await rerun(calm.body.testRunSetId, { only: 'failed' });
      assert.equal(none.status, 422, none.text);
      assert.equal(none.body.code, 'nothing_to_rerun');

      const cli = await trigger(server, ['--env', 'staging', '--rerun-failed', first]);
      assert.equal(cli.code, 0, cli.err);
      assert.deepEqual((await members(cli.out)).map((m) => m.name), ['fails', 'hangs']);
      await api(server, 'POST', `/v0/test-run-sets/${cli.out}/cancel`);
      const otherEnv = await trigger(server, ['--env', 'calm', '--rerun-failed', first]);
      assert.equal(otherEnv.code, 3);
      assert.match(otherEnv.err, /ran in environment staging, not --env calm: .* pass --env staging/);
      const cliNone = await trigger(server, ['--env', 'calm', '--rerun-failed', calm.body.testRunSetId, '--wait']);
      assert.equal(cliNone.code, 3);
      assert.match(cliNone.err, /could not rerun the failures of test run set .*\(nothing_to_rerun\)/);

      // `last`: the attempt's own set is still running, so it is the newest ENDED one of the first attempt's
      // label: the CLI's rerun above (a rerun keeps the labels of the set it reruns).
      const running = await api<Answer>(server, 'POST', '/v0/test-run-sets', { body: { env: 'staging', labels: { pipeline: `${RUN_URL}/attempts/2` } } });
      const last = await trigger(server, ['--env', 'staging', '--rerun-failed', 'last'], SECOND_ATTEMPT);
      assert.equal(last.code, 0, last.err);
      assert.match(last.err, new RegExp(`rerunning the failed tests of test run set ${cli.out}`));
      assert.deepEqual((await members(last.out)).map((m) => m.name), ['fails', 'hangs']);
      for (const id of [last.out, running.body.testRunSetId]) await api(server, 'POST', `/v0/test-run-sets/${id}/cancel`);
      const noneOfPipeline = await trigger(server, ['--env', 'calm', '--rerun-failed', 'last'], SECOND_ATTEMPT);
      assert.equal(noneOfPipeline.code, 3);
      assert.match(noneOfPipeline.err, /no ended set of environment "calm" carries the label pipeline:/);
      const outsideCi = await trigger(server, ['--env', 'staging', '--rerun-failed', 'last']);
      assert.equal(outsideCi.code, 3);
      assert.match(outsideCi.err, /needs the CI's pipeline label/);
      const mixed = await trigger(server, ['--env', 'staging', '--rerun-failed', first, '--tag', 'smoke']);
      assert.equal(mixed.code, 3);
      assert.match(mixed.err, /cannot be combined with --tag/);
    });
  });
}
