/**
 * Fan-out of a framework suite on real PostgreSQL: one Vitest suite's cases
 * spread over two `runset worker` processes, each running its share in one
 * Vitest process. Each case appends its number and its Vitest process's mark
 * (RUNSET_FRAMEWORK_MARK, one per process runset starts) to a marker file, so
 * "exactly once" and "one process per share" are counted from what really
 * ran, not from what the store says. That a worker alone takes a whole suite
 * in one share is the scheduler's rule, the same for every type: it is proven
 * once, with Playwright, in ./fanout.test.ts.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/server.js';
import { fleetOnFreshSchema, NO_DATABASE, TEST_DATABASE_URL, workersRegistered } from '../helpers/postgres.js';
import { createSet, listMembers, waitForSets } from '../helpers/scale.js';
import { frameworkModules, RegistryUnreachable } from '../helpers/framework-versions.js';

const VITEST = '4.1.12';

/** A Vitest suite of `files` files of `perFile` cases of `ms` each; undefined (and why) when Vitest cannot be installed. */
async function setUp(t: TestContext, files: number, perFile: number, ms: number) {
  let modules: string;
  try {
    modules = await frameworkModules('vitest', VITEST);
  } catch (error) {
    if (error instanceof RegistryUnreachable) return error.message;
    throw error;
  }
  const dir = tempDir('runset-fw-fanout-');
  const marker = path.join(dir, 'ran.log');
  writeFileSync(marker, '');
  const suite = path.join(dir, 'suite');
  mkdirSync(suite, { recursive: true });
  symlinkSync(modules, path.join(suite, 'node_modules'), 'dir');
  writeFileSync(path.join(suite, 'package.json'), JSON.stringify({ name: 'fanout', private: true, type: 'module' }));
  for (let f = 0; f < files; f++) {
    const cases = Array.from({ length: perFile }, (_, i) => {
      const n = f * perFile + i;
      return `test('case ${String(n).padStart(3, '0')}', async () => {\n  appendFileSync(process.env.MARKER, '${n} ' + process.env.RUNSET_FRAMEWORK_MARK + '\\n');\n  await new Promise((r) => setTimeout(r, ${ms}));\n});`;
    });
    writeFileSync(path.join(suite, `f${f}.test.js`), `import { test } from 'vitest';\nimport { appendFileSync } from 'node:fs';\n${cases.join('\n')}\n`);
  }
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, `environments:\n  e2e: { variables: { MARKER: "${marker}" } }\ntests:\n  - { name: suite, type: vitest, dir: suite, workers: 1 }\n`);
  return { ...fleetOnFreshSchema(t, 'runset_fwfan', configPath, dir), marker };
}


/** Each case's runs, and each framework process's cases (by its mark). */
function ran(marker: string): { times: Map<string, number>; processes: Map<string, string[]> } {
  const times = new Map<string, number>();
  const processes = new Map<string, string[]>();
  for (const line of readFileSync(marker, 'utf8').split('\n').filter(Boolean)) {
    const [n, mark] = line.split(' ') as [string, string];
    times.set(n, (times.get(n) ?? 0) + 1);
    processes.set(mark, [...(processes.get(mark) ?? []), n]);
  }
  return { times, processes };
}

test('two workers share one Vitest suite: each case runs once, both take part, each share in one Vitest process', { skip: TEST_DATABASE_URL ? false : NO_DATABASE, timeout: 180_000 }, async (t) => {
  const ready = await setUp(t, 6, 4, 300);
  if (typeof ready === 'string') return t.skip(ready);
  const { fleet, schema, marker } = ready;
  const api = await fleet.api();
  // Cases count as 1 s each (no history yet): a 6 s share is 6 of the 24, so 4 Vitest processes
  // (with 2 s, 12 of them: each start costs a second or two of CPU and proves nothing more).
  const args = ['--max-share', '6s', '--poll', '200ms'];
  const workers = [await fleet.worker(1, { args }), await fleet.worker(1, { args })];
  await workersRegistered(schema, 2);
  const id = await createSet(api, 'e2e');
  const [status] = (await waitForSets(api, [id], 120_000)).values();
  assert.equal(status!.status, 'SUCCESS');
  assert.deepEqual(status!.progress.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 24, FAIL: 0 });
  const members = await listMembers(api, id);
  const { times, processes } = ran(marker);
  assert.equal(times.size, 24, 'every case ran');
  assert.deepEqual([...times.values()].filter((n) => n !== 1), [], 'none ran twice');
  const byWorker = new Set(members.map((m) => m.workerId));
  assert.deepEqual([...byWorker].sort(), workers.map((w) => w.workerId).sort(), 'both workers took part');
  t.diagnostic(`${processes.size} Vitest processes`);
  assert.ok(processes.size >= 2 && processes.size < 24, `one Vitest process per share, never per case: ${processes.size} processes`);
  const workerOf = new Map(members.map((m) => [String(Number(/case (\d+)$/.exec(m.name)?.[1])), m.workerId]));
  for (const [mark, cases] of processes) {
    assert.equal(new Set(cases.map((n) => workerOf.get(n))).size, 1, `process ${mark} ran cases of one worker only`);
  }
  for (const w of workers) await w.stop();
  await api.stop();
});
