/**
 * runset at scale on real PostgreSQL: one API process and several worker
 * processes (the real CLI) on one schema, with workers killed, frozen, drained,
 * and the database restarted under them. Needs RUNSET_TEST_DATABASE_URL (the
 * restart test makes a private cluster of its own and never touches that one);
 * skips, saying why, without it. Each test has its own schema, dropped after it,
 * and fails if it leaves a process behind (test/helpers/fleet.ts).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { newToken } from '../../src/auth/keys.js';
import { tempDir } from '../helpers/server.js';
import { Fleet, pidAlive } from '../helpers/fleet.js';
import { dropSchemas, memberRows, newSchemaName, NO_DATABASE, PrivateCluster, privateClusterUnavailable, query, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { createSet, getStatus, listMembers, SetWatcher, sleep, statusProblems, tally, until, waitForSets, type Server } from '../helpers/scale.js';

interface Setup {
  fleet: Fleet;
  schema: string;
  dir: string;
  marker: string;
  url: string;
}

type Defer = (step: () => unknown) => void;

/**
 * Undo steps for one test, run after it in reverse order; every step runs even
 * when an earlier one fails (a leak report must not leave a connection open and
 * the test process hanging), and the failures are reported together.
 */
function cleanups(t: TestContext): Defer {
  const steps: Array<() => unknown> = [];
  t.after(async () => {
    const errors: unknown[] = [];
    for (const step of steps.reverse()) {
      try {
        await step();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, errors.map((e) => (e as Error).message).join('\n'));
  });
  return (step) => void steps.push(step);
}

/** A config file, a marker file, a schema and a fleet, undone after the test (the fleet first). */
function setUp(defer: Defer, config: (marker: string) => string, url: string, dropSchema = true): Setup {
  const dir = tempDir('runset-scale-');
  defer(() => rmSync(dir, { recursive: true, force: true }));
  const marker = path.join(dir, 'marker.log');
  writeFileSync(marker, '');
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, config(marker));
  const schema = newSchemaName('runset_scale');
  if (dropSchema) defer(() => dropSchemas(url, [schema]));
  const fleet = new Fleet({ databaseUrl: url, schema, configPath, apiKey: newToken() });
  defer(() => fleet.teardown());
  return { fleet, schema, dir, marker, url };
}

/** A status watcher that stops after the test whatever happens (its loop would keep the process alive). */
function watch(defer: Defer, server: Server, ids: readonly string[]): SetWatcher {
  const watcher = new SetWatcher(server, ids, 10);
  watcher.start();
  defer(() => watcher.stop());
  return watcher;
}

/** "message ×count" for each distinct pino message in a log. */
function summarizeLog(log: string): string {
  const seen = new Map<string, number>();
  for (const line of log.split('\n')) {
    const msg = /"msg":"([^"]*)"/.exec(line)?.[1];
    if (msg) seen.set(msg, (seen.get(msg) ?? 0) + 1);
  }
  return [...seen].map(([m, n]) => `${m} ×${n}`).join(', ') || '(nothing)';
}

function markerLines(file: string): string[][] {
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => l.split(' '));
}

/** Ten short members; each appends "<set tag> <member> <pid>" to the marker and prints "token <pid>". */
function tenMembers(marker: string): string {
  const tests = Array.from({ length: 10 }, (_, i) => {
    const pause = (0.02 + 0.015 * i).toFixed(3);
    return `  - name: m${i}
    type: command
    run: [sh, -c, 'echo "$SET_TAG m${i} $$" >> "$MARKER"; echo "token $$"; sleep ${pause}']`;
  });
  return `environments:\n  scale:\n    variables: { SET_TAG: none, MARKER: "${marker}" }\ntests:\n${tests.join('\n')}\n`;
}

/** Every set ended SUCCESS with 10 members; counts = members endpoint = the store's own rows. */
async function assertAllSucceeded(server: Server, url: string, schema: string, ids: readonly string[]): Promise<void> {
  const rows = await memberRows(url, schema);
  for (const id of ids) {
    const status = await getStatus(server, id);
    assert.deepEqual(statusProblems(status, 10), []);
    assert.deepEqual(status.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 10, FAIL: 0 }, `set ${id}`);
    assert.equal(status.status, 'SUCCESS');
    const members = await listMembers(server, id);
    assert.deepEqual(tally(members), status.progress.counts, `members endpoint of set ${id}`);
    assert.deepEqual(tally(rows.filter((r) => r.set_id === id)), status.progress.counts, `store rows of set ${id}`);
  }
}

const FAST = ['--lease', '3s', '--poll', '200ms'];

test('50 sets × 10 members on two workers, one killed with SIGKILL mid-run: every set ends, each member once', { skip: TEST_DATABASE_URL ? false : NO_DATABASE, timeout: 90_000 }, async (t) => {
  const defer = cleanups(t);
  const { fleet, schema, marker, url } = setUp(defer, tenMembers, TEST_DATABASE_URL!);
  const server = await fleet.api();
  const doomed = await fleet.worker(4, { args: FAST });
  const survivor = await fleet.worker(4, { args: FAST });
  const ids: string[] = [];
  for (let i = 0; i < 50; i++) ids.push(await createSet(server, 'scale', { SET_TAG: `s${i}` }));
  const watcher = watch(defer, server, ids);

  const count = async (where: string, values: unknown[] = []) =>
    Number((await query<{ n: string }>(url, `SELECT count(*) AS n FROM "${schema}".test_runs WHERE ${where}`, values))[0]!.n);
  await until('100 members done with the doomed worker busy', async () =>
    (await count("status = 'SUCCESS'")) >= 100 && (await count("status = 'RUNNING' AND worker_id = $1", [doomed.workerId])) > 0,
  30_000, 20);
  doomed.signal('SIGKILL');
  await doomed.exited;
  // Its leases stay until they expire (3s): these members were in flight when it died, or
  // reserved for a slot's next turn (still WAITING, perhaps already started).
  const orphaned = new Set((await memberRows(url, schema)).filter((r) => r.worker_id === doomed.workerId).map((r) => r.id));
  assert.ok(orphaned.size > 0, 'the kill hit the worker mid-run');

  await waitForSets(server, ids, 60_000);
  await watcher.stop();
  assert.deepEqual(watcher.violations, []);
  assert.ok(watcher.samples >= 50, `the watcher saw the run (${watcher.samples} samples)`);
  await assertAllSucceeded(server, url, schema, ids);

  // Exactly one outcome accepted per member: the re-run ones are exactly the orphaned ones,
  // and what the store kept is the output of that member's last execution.
  const executions = new Map<string, string[]>();
  for (const [tag, name, pid] of markerLines(marker)) {
    const key = `${tag} ${name}`;
    executions.set(key, [...(executions.get(key) ?? []), pid!]);
  }
  const rows = await memberRows(url, schema);
  assert.equal(rows.length, 500);
  for (const row of rows) {
    const tag = `s${ids.indexOf(row.set_id)}`;
    const pids = executions.get(`${tag} ${row.name}`) ?? [];
    const rerun = orphaned.has(row.id);
    // An orphan ran once or twice: the dead worker may have claimed it without having started it yet.
    assert.ok(rerun ? pids.length === 1 || pids.length === 2 : pids.length === 1, `${tag} ${row.name}: ${pids.length} executions`);
    // Claims count leases handed out, and a slot's reservation given back unused is one too.
    assert.ok(row.claims >= (rerun ? 2 : 1), `${tag} ${row.name} claims`);
    assert.equal(row.lost_leases, rerun ? 1 : 0, `${tag} ${row.name} lost leases`);
    assert.equal(row.output?.trim(), `token ${pids[pids.length - 1]}`, `${tag} ${row.name}: the kept outcome is its last execution's`);
  }
  assert.doesNotMatch(survivor.logs(), /outcome discarded|lease lost/, 'the surviving worker never lost a lease');
  assert.deepEqual(await survivor.stop(), { code: 0, signal: null });
  assert.deepEqual(await server.stop(), { code: 0, signal: null });
});

test('a worker frozen (SIGSTOP) past its lease, then resumed, changes nothing: the taker-over\'s result stands', { skip: TEST_DATABASE_URL ? false : NO_DATABASE, timeout: 60_000 }, async (t) => {
  // Passes on worker B only: worker A's late write, if it were accepted, would turn the set FAIL.
  const { fleet, schema, marker, url } = setUp(cleanups(t), (m) => `
environments:
  local: { variables: { MARKER: "${m}" } }
tests:
  - name: depends on the worker
    type: command
    run: [sh, -c, 'echo "$SCALE_MARK $$" >> "$MARKER"; echo "ran on $SCALE_MARK"; sleep 1.5; test "$SCALE_MARK" = B']
`, TEST_DATABASE_URL!);
  const lease = ['--lease', '1s', '--poll', '200ms'];
  const server = await fleet.api();
  const a = await fleet.worker(1, { args: lease, env: { SCALE_MARK: 'A' } });
  const id = await createSet(server, 'local');
  const row = async () => (await memberRows(url, schema, id))[0]!;
  // Claimed, and begun: its command has written its line (commands start in the worker's launcher, a moment later).
  await until('worker A runs the member', async () => markerLines(marker).length === 1 && (await row()).worker_id === a.workerId);
  a.signal('SIGSTOP');
  const b = await fleet.worker(1, { args: lease, env: { SCALE_MARK: 'B' } });
  await until('worker B takes the member over', async () => (await row()).worker_id === b.workerId, 10_000);
  assert.deepEqual([(await row()).claims, (await row()).lost_leases], [2, 1]);

  // A's own execution has ended (it failed, being A's) while A was frozen: its outcome is waiting to be written.
  const aPid = Number(markerLines(marker).find(([mark]) => mark === 'A')![1]);
  await until('A\'s member process ends', () => !pidAlive(aPid), 5000);
  const bStillRunning = (await row()).status === 'RUNNING';
  a.signal('SIGCONT');
  const noticed = await a.waitForOutput(/lease was taken over|lease lost/, 5000);

  const [done] = [...(await waitForSets(server, [id], 15_000)).values()];
  assert.equal(done!.status, 'SUCCESS', "worker B's result stands");
  assert.deepEqual(done!.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 0 });
  const [member] = await listMembers(server, id);
  assert.match(member!.output ?? '', /ran on B/);
  assert.equal(member!.error, null);
  assert.deepEqual(markerLines(marker).map(([mark]) => mark), ['A', 'B'], 'each worker ran it once');
  await sleep(500);
  assert.deepEqual(await getStatus(server, id), done, 'nothing changed afterwards');
  t.diagnostic(`A resumed while B's run was ${bStillRunning ? 'still in flight' : 'already written'}; A said "${noticed[0]}"`);
  for (const p of [a, b, server]) assert.deepEqual(await p.stop(), { code: 0, signal: null }, p.name);
});

test('a worker frozen while its claim waits on a lock holds nothing: the others go on, and what it claimed comes back after its lease', { skip: TEST_DATABASE_URL ? false : NO_DATABASE, timeout: 60_000 }, async (t) => {
  const defer = cleanups(t);
  const { fleet, schema, marker, url } = setUp(defer, (m) => `
environments:
  local: { variables: { MARKER: "${m}" } }
tests:
${[1, 2, 3, 4].map((i) => `  - { name: q${i}, type: command, run: [sh, -c, 'echo "$SCALE_MARK" >> "$MARKER"'] }`).join('\n')}
`, TEST_DATABASE_URL!);
  const lease = ['--lease', '1s', '--poll', '200ms'];
  const server = await fleet.api();
  const id = await createSet(server, 'local');
  // Hold the set's row so that worker A's first claim stops on its lock, member rows already taken.
  const holder = new pg.Client({ connectionString: url, statement_timeout: 20_000 });
  await holder.connect();
  defer(() => holder.end());
  await holder.query('BEGIN');
  await holder.query(`SELECT id FROM "${schema}".test_run_sets WHERE id = $1 FOR UPDATE`, [id]);
  const a = await fleet.worker(1, { args: lease, env: { SCALE_MARK: 'A' } });
  const backendsOf = (state: string, extra = '') => query(url, `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND state = $2 ${extra}`, [`runset:${schema}`, state]);
  await until("A's claim waits for the set's lock", async () => (await backendsOf('active', "AND wait_event_type = 'Lock'")).length === 1);
  a.signal('SIGSTOP');
  await holder.query('ROLLBACK');
  // A claim is one statement: it completes and commits on the server while A is frozen, so A holds
  // no lock and no open transaction, only the lease on what it claimed.
  await until("A's claim commits without A", async () => (await backendsOf('active')).length === 0 && (await backendsOf('idle in transaction')).length === 0);
  const claimedByA = (await memberRows(url, schema, id)).filter((r) => r.status === 'RUNNING');
  assert.equal(claimedByA.length, 1, 'A claimed one member (it has one slot)');

  const b = await fleet.worker(2, { args: lease, env: { SCALE_MARK: 'B' } });
  const [done] = [...(await waitForSets(server, [id], 20_000)).values()];
  assert.equal(done!.status, 'SUCCESS');
  assert.deepEqual(done!.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 4, FAIL: 0 });
  assert.deepEqual(markerLines(marker).map(([mark]) => mark), ['B', 'B', 'B', 'B'], 'B ran them all, A\'s claim once its lease expired');
  const taken = (await memberRows(url, schema, id)).find((r) => r.id === claimedByA[0]!.id)!;
  assert.deepEqual([taken.claims, taken.lost_leases], [2, 1]);

  a.signal('SIGCONT');
  // A reads its claim's answer late: it gives the member back instead of running it a second time.
  await a.waitForOutput(/answered after its lease could have expired/, 5000);
  await sleep(300);
  assert.ok(a.running, 'A carries on');
  assert.deepEqual(markerLines(marker).map(([mark]) => mark), ['B', 'B', 'B', 'B'], 'A ran nothing');
  assert.deepEqual(await getStatus(server, id), done, 'and changed nothing');
  t.diagnostic(`A's member was taken over after ${taken.claims - 1} lost lease`);
  for (const p of [a, b, server]) assert.deepEqual(await p.stop(), { code: 0, signal: null }, p.name);
});

/** One member; W1 sleeps $SLEEP seconds in it (in a grandchild), any other worker passes at once. */
const drainConfig = (m: string) => `
environments:
  local: { variables: { MARKER: "${m}", SLEEP: "1" } }
tests:
  - name: drains
    type: command
    run: [sh, -c, 'if [ "$SCALE_MARK" = W1 ]; then sleep "$SLEEP" & echo "W1 $$ $!" >> "$MARKER"; wait; else echo "$SCALE_MARK $$" >> "$MARKER"; fi']
`;

test('SIGTERM drains: an in-flight member finishes within --grace and the worker exits 0', { skip: TEST_DATABASE_URL ? false : NO_DATABASE, timeout: 60_000 }, async (t) => {
  const { fleet, schema, url } = setUp(cleanups(t), drainConfig, TEST_DATABASE_URL!);
  const server = await fleet.api();
  const w1 = await fleet.worker(1, { args: ['--grace', '5s', '--poll', '200ms'], env: { SCALE_MARK: 'W1' } });
  const id = await createSet(server, 'local', { SLEEP: '1' });
  await until('W1 runs the member', async () => (await memberRows(url, schema, id))[0]!.worker_id === w1.workerId);
  const signalled = Date.now();
  assert.deepEqual(await w1.stop('SIGTERM', 10_000), { code: 0, signal: null });
  assert.ok(Date.now() - signalled < 8000, 'exited soon after the member ended, within the grace (plus a margin for a busy machine)');
  const status = await getStatus(server, id);
  assert.equal(status.status, 'SUCCESS', 'the member finished before the worker exited');
  assert.deepEqual(status.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 0 });
  assert.equal((await memberRows(url, schema, id))[0]!.claims, 1);
  assert.deepEqual(await server.stop(), { code: 0, signal: null });
});

test('SIGTERM past --grace: the member goes back to WAITING, its processes die with the worker, another worker completes it', { skip: TEST_DATABASE_URL ? false : NO_DATABASE, timeout: 60_000 }, async (t) => {
  const { fleet, schema, marker, url } = setUp(cleanups(t), drainConfig, TEST_DATABASE_URL!);
  const server = await fleet.api();
  // A long lease: the member must come back through the release, not by expiring.
  const w1 = await fleet.worker(1, { args: ['--grace', '1s', '--lease', '30s', '--poll', '200ms'], env: { SCALE_MARK: 'W1' } });
  const id = await createSet(server, 'local', { SLEEP: '30' });
  await until('W1 runs the member', () => markerLines(marker).length === 1);
  const [, shPid, sleepPid] = markerLines(marker)[0]!.map(Number);
  const before = await getStatus(server, id);
  assert.equal(before.status, 'RUNNING');

  const signalled = Date.now();
  assert.deepEqual(await w1.stop('SIGTERM', 10_000), { code: 0, signal: null });
  const took = Date.now() - signalled;
  assert.ok(took >= 900 && took < 10_000, `exited after the 1s grace, not the 30s member (${took}ms)`);
  assert.equal(pidAlive(shPid!), false, 'the member process did not outlive its worker');
  assert.equal(pidAlive(sleepPid!), false, "the member's child process did not outlive its worker");

  const [member] = await listMembers(server, id);
  assert.equal(member!.status, 'WAITING', 'given back to WAITING');
  const released = await getStatus(server, id);
  assert.equal(released.status, 'RUNNING', 'a set never moves backwards');
  assert.equal(released.startedAt, before.startedAt, 'and keeps its first startedAt');
  const [row] = await memberRows(url, schema, id);
  assert.deepEqual([row!.worker_id, row!.claims, row!.lost_leases], [null, 1, 0], 'released, not lost');

  const w2 = await fleet.worker(1, { args: ['--poll', '200ms'], env: { SCALE_MARK: 'W2' } });
  const [done] = [...(await waitForSets(server, [id], 15_000)).values()];
  assert.equal(done!.status, 'SUCCESS');
  assert.deepEqual(done!.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 0 });
  assert.equal(done!.startedAt, before.startedAt);
  assert.deepEqual(markerLines(marker).map(([mark]) => mark), ['W1', 'W2']);
  for (const p of [w2, server]) assert.deepEqual(await p.stop(), { code: 0, signal: null }, p.name);
});

const noCluster = privateClusterUnavailable();

test('PostgreSQL restarted mid-run (a private cluster): runs resume and every set ends consistent', { skip: !TEST_DATABASE_URL ? NO_DATABASE : (noCluster ?? false), timeout: 120_000 }, async (t) => {
  const defer = cleanups(t);
  const cluster = await PrivateCluster.create();
  defer(() => cluster.destroy());
  const { fleet, schema, url } = setUp(defer, tenMembers, cluster.url, false);
  const server = await fleet.api();
  // A lease shorter than the outage: leases expire meanwhile, so members are taken back and run again.
  const worker = await fleet.worker(4, { args: ['--lease', '1s', '--poll', '200ms'] });
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) ids.push(await createSet(server, 'scale', { SET_TAG: `s${i}` }));
  const watcher = watch(defer, server, ids);
  await until('30 members done', async () =>
    Number((await query<{ n: string }>(url, `SELECT count(*) AS n FROM "${schema}".test_runs WHERE status = 'SUCCESS'`))[0]!.n) >= 30,
  30_000, 20);

  cluster.stop('fast');
  await sleep(1500);
  assert.ok(server.running && worker.running, 'the API and the worker outlive the outage');
  cluster.start();
  // Sets created after the restart run too (the wake-up connection came back, or the poll found them).
  for (let i = 20; i < 25; i++) ids.push(await createSet(server, 'scale', { SET_TAG: `s${i}` }, 20_000));

  await waitForSets(server, ids, 60_000);
  await watcher.stop();
  assert.deepEqual(watcher.violations, []);
  await assertAllSucceeded(server, url, schema, ids);
  t.diagnostic(`members run again after the restart: ${(await memberRows(url, schema)).filter((r) => r.claims > 1).length}`);
  t.diagnostic(`worker said: ${summarizeLog(worker.logs())}; API said: ${summarizeLog(server.logs())}`);
  for (const p of [worker, server]) assert.deepEqual(await p.stop(), { code: 0, signal: null }, p.name);
});
