/**
 * Fan-out on real PostgreSQL: one Playwright suite's cases spread over several
 * `runset worker` processes, each taking its share (src/scheduler/shares.ts):
 * every case runs exactly once, every worker takes part, a worker killed
 * mid-share loses nothing, a worker that joins late helps, and a worker alone
 * runs the suite in one Playwright process.
 *
 * The suite is browser-free (timers), and each case appends its title and the
 * Playwright runner's pid to a marker file, so "exactly once" is counted from
 * what really ran, not from what the store says.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/server.js';
import { Fleet } from '../helpers/fleet.js';
import { fleetOnFreshSchema, NO_DATABASE, TEST_DATABASE_URL, workersRegistered } from '../helpers/postgres.js';
import { createSet, listMembers, until, waitForSets, type Member } from '../helpers/scale.js';

const SKIP = TEST_DATABASE_URL ? false : NO_DATABASE;

interface Suite {
  fleet: Fleet;
  marker: string;
  schema: string;
  /** Lets gated cases go on (see setUp). */
  openGate: () => void;
}

/**
 * A suite of `cases` cases of `ms` each (fullyParallel), run by entries of 2 Playwright workers. With `gated`, each
 * case, once begun, waits until the test calls openGate(): a test that must act while shares are running (a kill, a
 * worker that joins) does so at a known point instead of racing cases against a worker's start, with few shares (each
 * share is a Playwright process, seconds of CPU).
 */
function setUp(t: TestContext, cases: number, ms: number, gated = false): Suite {
  const dir = tempDir('runset-fanout-');
  const marker = path.join(dir, 'ran.log');
  const gate = path.join(dir, 'gate');
  writeFileSync(marker, '');
  mkdirSync(path.join(dir, 'suite', 'tests'), { recursive: true });
  // A long timeout: a gated case waits for the test, which waits for worker starts on a loaded machine.
  writeFileSync(path.join(dir, 'suite', 'playwright.config.js'), "module.exports = { testDir: 'tests', fullyParallel: true, timeout: 120_000 };\n");
  const wait = gated ? `  while (!fs.existsSync(${JSON.stringify(gate)})) await new Promise((r) => setTimeout(r, 20));\n` : '';
  const body = Array.from({ length: cases }, (_, i) =>
    `test('case ${String(i).padStart(3, '0')}', async () => {\n  fs.appendFileSync(process.env.MARKER, 'case ${i} ' + process.ppid + '\\n');\n${wait}  await new Promise((r) => setTimeout(r, ${ms}));\n});`,
  );
  writeFileSync(path.join(dir, 'suite', 'tests', 'many.spec.js'), `const { test } = require('@playwright/test');\nconst fs = require('node:fs');\n${body.join('\n')}\n`);
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, `environments:\n  e2e: { variables: { MARKER: "${marker}" } }\ntests:\n  - { name: suite, type: playwright, dir: suite, workers: 2 }\n`);
  const { fleet, schema } = fleetOnFreshSchema(t, 'runset_fanout', configPath, dir);
  return { fleet, marker, schema, openGate: () => writeFileSync(gate, '') };
}


/** How many times each case ran (from the marker), and how many distinct Playwright runners ran them. */
function ran(marker: string): { times: Map<string, number>; runners: number } {
  const lines = readFileSync(marker, 'utf8').split('\n').filter(Boolean);
  const times = new Map<string, number>();
  for (const line of lines) {
    const [, n] = line.split(' ');
    times.set(n!, (times.get(n!) ?? 0) + 1);
  }
  return { times, runners: new Set(lines.map((l) => l.split(' ')[2])).size };
}

function perWorker(members: Member[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of members) counts.set(m.workerId ?? '(none)', (counts.get(m.workerId ?? '(none)') ?? 0) + 1);
  return counts;
}

test('four worker processes share one 200-case suite: each case runs exactly once, every worker takes part', { skip: SKIP, timeout: 120_000 }, async (t) => {
  const { fleet, marker, schema } = setUp(t, 200, 20);
  const api = await fleet.api();
  const workers = await Promise.all([1, 2, 3, 4].map(() => fleet.worker(2)));
  await workersRegistered(schema, 4);
  const id = await createSet(api, 'e2e');
  const [status] = (await waitForSets(api, [id], 90_000)).values();
  assert.equal(status!.status, 'SUCCESS');
  assert.deepEqual(status!.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 200, FAIL: 0 });
  const members = await listMembers(api, id);
  assert.ok(members.every((m) => m.attempts === 1), 'no case needed a second attempt');
  assert.ok(members.every((m) => m.starts === 1), 'no case was started twice');
  const { times } = ran(marker);
  assert.equal(times.size, 200, 'every case ran');
  assert.deepEqual([...times.values()].filter((n) => n !== 1), [], 'none ran twice');
  const counts = perWorker(members);
  assert.deepEqual([...counts.keys()].sort(), workers.map((w) => w.workerId).sort(), `every worker took part: ${JSON.stringify([...counts])}`);
  for (const w of workers) await w.stop();
  await api.stop();
});

test('a worker killed mid-share loses nothing: its cases run on the other worker', { skip: SKIP, timeout: 120_000 }, async (t) => {
  // Shares of 6 (3 s a slot at the default expected 1 s a case): one for each worker, its cases held at the gate.
  const { fleet, schema, openGate } = setUp(t, 12, 50, true);
  const api = await fleet.api();
  const fast = ['--lease', '1s', '--poll', '200ms', '--max-share', '3s'];
  const doomed = await fleet.worker(2, { args: fast });
  const survivor = await fleet.worker(2, { args: fast });
  await workersRegistered(schema, 2);
  const id = await createSet(api, 'e2e');
  // Once the doomed worker runs cases of its share (held at the gate), it dies without a word.
  let held: Member[] = [];
  await until('the doomed worker runs a case', async () => {
    held = (await listMembers(api, id)).filter((m) => m.status === 'RUNNING' && m.workerId === doomed.workerId);
    return held.length > 0;
  }, 30_000);
  doomed.signal('SIGKILL');
  await doomed.exited;
  openGate();
  const [status] = (await waitForSets(api, [id], 90_000)).values();
  assert.equal(status!.status, 'SUCCESS', 'every case ended, and passed');
  assert.deepEqual(status!.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 12, FAIL: 0 });
  const members = await listMembers(api, id);
  const counts = perWorker(members);
  assert.ok((counts.get(survivor.workerId) ?? 0) > 0, 'the survivor ran what was left');
  // At least once, and said so: a case the doomed worker was running when it died was started again after its
  // lease was lost, as a restart and not a retry (held at the gate, none could end there before the kill).
  for (const was of held) {
    const m = members.find((x) => x.id === was.id)!;
    assert.ok(m.starts >= 2 && m.restarts.length === m.starts - 1 && m.restarts.includes('lease lost') && m.attempts === 1, `${m.name}: ${JSON.stringify(m)}`);
    assert.equal(m.workerId, survivor.workerId, `${m.name} ended on the survivor`);
  }
  // (A case of a share can begin in Playwright a moment before its start reaches the store: a worker killed
  // in that moment ran it once more than its member says. README, Walkthrough with curl.)
  await survivor.stop();
  await api.stop();
});

test('a worker that joins mid-set takes part in what is still waiting', { skip: SKIP, timeout: 120_000 }, async (t) => {
  // Shares of 4 (2 s a slot at the default expected 1 s a case) while others can help: the first two workers take
  // one each and hold them at the gate, so 4 cases still wait when the late worker joins, however slow its start.
  const { fleet, schema, openGate } = setUp(t, 12, 50, true);
  const api = await fleet.api();
  const args = ['--max-share', '2s', '--poll', '200ms'];
  const first = [await fleet.worker(2, { args }), await fleet.worker(2, { args })];
  await workersRegistered(schema, 2);
  const id = await createSet(api, 'e2e');
  await until('the first workers run a case', async () => (await listMembers(api, id)).some((m) => m.status === 'RUNNING'), 30_000);
  const late = await fleet.worker(2, { args });
  await until('the late worker runs a case', async () => (await listMembers(api, id)).some((m) => m.status === 'RUNNING' && m.workerId === late.workerId), 60_000);
  openGate();
  const [status] = (await waitForSets(api, [id], 90_000)).values();
  assert.equal(status!.status, 'SUCCESS');
  const counts = perWorker(await listMembers(api, id));
  assert.ok((counts.get(late.workerId) ?? 0) > 0, `the late worker took part: ${JSON.stringify([...counts])}`);
  for (const w of first) assert.ok((counts.get(w.workerId) ?? 0) > 0);
  for (const w of [...first, late]) await w.stop();
  await api.stop();
});

test('a worker alone takes the whole suite in one Playwright process, past --max-share', { skip: SKIP, timeout: 120_000 }, async (t) => {
  const { fleet, marker, schema } = setUp(t, 40, 50);
  const api = await fleet.api();
  const worker = await fleet.worker(2, { args: ['--max-share', '1s'] });
  await workersRegistered(schema, 1);
  const id = await createSet(api, 'e2e');
  const [status] = (await waitForSets(api, [id], 90_000)).values();
  assert.equal(status!.status, 'SUCCESS');
  const { times, runners } = ran(marker);
  assert.equal(times.size, 40);
  assert.equal(runners, 1, 'one Playwright process: nobody else could have taken a part');
  await worker.stop();
  await api.stop();
});
