/**
 * A suite whose `webServer` listens on a fixed port, as real suites have it,
 * run by runset where two batches of it could start on one host at once: two
 * slots of one `serve` process, and two `runset worker` processes on one host
 * (PostgreSQL). Two sets are created at once, so two batches are ready
 * together. What must hold (src/scheduler/webserver-gate.ts):
 * - outcomes equal to `playwright test` run directly, the deliberate failure
 *   included, and no server start that found the port taken;
 * - the server's own log shows one start per batch and no two servers alive at
 *   once;
 * - a worker alone runs a whole entry in one Playwright process (the suite
 *   starts once per set), and so do two worker processes of one host (what
 *   one of them claimed while the other took the port comes back to the
 *   other's batch); a batch waiting for the port was given back, not claimed
 *   over and over; the second process says at start that it cannot help
 *   with such a suite, and to give one process --workers N instead.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { assertNoLeakedServers, startRunset, tempDir } from '../helpers/server.js';
import { fleetOnFreshSchema, memberRows, NO_DATABASE, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { createSet, listMembers, until, waitForSets, type Server } from '../helpers/scale.js';
import { overlaps, ranTests, runDirectly, serverRuns, writeWebServerSuite, type WebServerSuite } from '../helpers/webserver-suite.js';
import { chromiumMissing } from './playwright-fixtures.js';
import { SECOND_PROCESS_ADVICE } from '../../src/scheduler/webserver-gate.js';

const NO_CHROMIUM = chromiumMissing();

interface Fixture { dir: string; suite: WebServerSuite; configPath: string; direct: Map<string, 'SUCCESS' | 'FAIL'> }

/**
 * 9 tests in 3 files calling the server with Playwright's request fixture, one failing on purpose; a
 * server that takes 1 s to listen. No test opens a page: what is proven is the port's turns between
 * Playwright processes, which a browser does not change, and each of the five runs would launch one.
 * Written and run directly once for the file: both tests compare with that run and start from empty logs.
 */
let made: Promise<Fixture> | undefined;
async function setUp(): Promise<Fixture> {
  made ??= makeFixture();
  const fixture = await made;
  writeFileSync(fixture.suite.serverLog, '');
  writeFileSync(fixture.suite.marker, '');
  return fixture;
}

after(async () => {
  const fixture = await made?.catch(() => undefined);
  if (fixture) rmSync(fixture.dir, { recursive: true, force: true });
});

async function makeFixture(): Promise<Fixture> {
  const dir = tempDir('runset-webserver-');
  const suite = await writeWebServerSuite(dir, {
    files: 3, tests: 9, startMs: 1000, workers: 1,
    waitMs: (i) => 100 + (i % 4) * 150, usesPage: () => false, fails: (i) => i === 4,
  });
  const { outcomes: direct } = await runDirectly(suite.dir);
  assert.equal([...direct.values()].filter((o) => o === 'FAIL').length, 1, `the direct run: ${JSON.stringify([...direct])}`);
  // What the direct run logged is not runset's; Playwright may exit before its server has.
  await until('the direct run\'s server stopped', () => serverRuns(suite.serverLog).every((r) => r.stop !== undefined), 15_000);
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, 'environments:\n  e2e: { variables: {} }\ntests:\n  - { name: shop, type: playwright, dir: suite, workers: 1 }\n');
  return { dir, suite, configPath, direct };
}

/**
 * Both sets' outcomes equal the direct run's; the server never started on a
 * taken port nor two at once; `startsPerSet` at most per set (1: one Playwright
 * process per set).
 */
async function checkRuns(server: Server, ids: string[], suite: WebServerSuite, direct: Map<string, 'SUCCESS' | 'FAIL'>, startsPerSet: number): Promise<void> {
  const statuses = await waitForSets(server, ids, 150_000);
  for (const id of ids) {
    assert.equal(statuses.get(id)!.status, 'FAIL', 'the deliberate failure fails the set');
    const members = await listMembers(server, id);
    assert.deepEqual(new Map(members.map((m) => [m.name, m.status])), direct, 'outcomes as `playwright test` gives them');
    assert.ok(members.every((m) => m.attempts === 1 && m.starts === 1), 'no case ran twice: one start each, no retry in it');
  }
  // A set ends when its last case does; its server stops a moment later.
  await until('the last server stopped', () => serverRuns(suite.serverLog).every((r) => r.stop !== undefined), 15_000);
  const runs = serverRuns(suite.serverLog);
  assert.deepEqual(runs.flatMap((r) => r.errors), [], 'no server found its port taken');
  assert.deepEqual(overlaps(runs), [], `never two servers at once: ${JSON.stringify(runs)}`);
  const { names, runners } = ranTests(suite.marker);
  const what = `${JSON.stringify(runs)}\n${readFileSync(suite.marker, 'utf8')}`;
  assert.equal(names.length, direct.size * ids.length, 'every test ran once per set');
  assert.equal(runners.size, runs.length, `one server start per Playwright process: ${what}`);
  assert.ok(runs.length <= ids.length * startsPerSet, `at most ${startsPerSet} Playwright process(es) per set: ${what}`);
}

test('serve with 2 slots: two batches of a fixed-port webServer suite take turns, outcomes as run directly', { skip: NO_CHROMIUM, timeout: 240_000 }, async (t) => {
  const { suite, configPath, direct } = await setUp();
  const server = await startRunset({ configPath, args: ['--workers', '2'] });
  t.after(async () => {
    await server.stop();
    assertNoLeakedServers();
  });
  const ids = await Promise.all([createSet(server, 'e2e'), createSet(server, 'e2e')]);
  // One process, its claims one after another: a worker alone runs each set's entry in one Playwright process.
  await checkRuns(server, ids, suite, direct, 1);
});

test('two worker processes on one host: batches of a fixed-port webServer suite take turns, and a waiting batch is given back', { skip: NO_CHROMIUM || (TEST_DATABASE_URL ? false : NO_DATABASE), timeout: 240_000 }, async (t) => {
  const { dir, suite, configPath, direct } = await setUp();
  const { fleet, schema } = fleetOnFreshSchema(t, 'runset_webserver', configPath, dir);
  const api = await fleet.api();
  const workers = [await fleet.worker(1, { args: ['--poll', '500ms'] }), await fleet.worker(1, { args: ['--poll', '500ms'] })];
  const ids = await Promise.all([createSet(api, 'e2e'), createSet(api, 'e2e')]);
  // What a neighbour claimed of a batch while it took the port comes back to that batch, so each set
  // runs in one Playwright process, as with one worker process.
  await checkRuns(api, ids, suite, direct, 1);
  // A process that starts where another runs says it cannot help a fixed-port suite, and how to get more
  // slots for one. The mark is the host's, and npm test runs other files' workers at the same time: the
  // first of these two may itself start second, so at least one of them (never neither) says it.
  assert.ok(workers.some((w) => w.logs().includes(SECOND_PROCESS_ADVICE)), workers.map((w) => w.logs()).join('\n---\n'));
  // A member is given back when its batch finds the port held, and again when a neighbour's claim of it came
  // while this worker's process was already running; a batch that spun on the lock would claim it dozens of times.
  const rows = await memberRows(TEST_DATABASE_URL!, schema);
  assert.ok(rows.every((r) => r.claims <= 3), `claims per member: ${rows.map((r) => r.claims).join(',')}`);
  for (const w of workers) await w.stop();
  await api.stop();
});
