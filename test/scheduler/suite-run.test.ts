/**
 * Members of a set that runs an uploaded suite version (ClaimedRun.suiteVersion), in
 * a worker pool over a fake link with a real suite cache: each runs its spec
 * relocated into the unpacked version (its own files), and when the version
 * cannot be made ready every member ends FAIL saying why, never left leased.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { VERSION_ROOT } from '../../src/core/suites.js';
import type { CommandTestSpec, Executor } from '../../src/core/types.js';
import { WorkerPool } from '../../src/scheduler/pool.js';
import { SuiteCache } from '../../src/suites/cache.js';
import { commandSpec, FakeLink, type FakeMember } from '../helpers/fake-link.js';
import { ArchiveServer, makeArchive } from '../helpers/suite-archive.js';

const made: string[] = [];
after(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

/** Passes when marker.txt in the command's cwd says what its first argument expects; tells where it ran. */
function markerExecutor(ran: string[]): Executor<CommandTestSpec> {
  return {
    type: 'command',
    run: async (spec) => {
      ran.push(spec.cwd);
      const marker = await readFile(path.join(spec.cwd, 'marker.txt'), 'utf8').catch(() => 'none');
      return { passed: marker === spec.run[0], error: marker === spec.run[0] ? null : `marker ${marker}`, output: marker };
    },
  };
}

async function poolWith(link: FakeLink, server: ArchiveServer, ran: string[]): Promise<WorkerPool> {
  const dir = await mkdtemp(path.join(tmpdir(), 'runset-suite-run-'));
  made.push(dir);
  return new WorkerPool({
    link,
    executors: new Map([['command', markerExecutor(ran)]]),
    resolveVariables: () => ({ values: {}, secrets: [] }),
    logger: pino({ level: 'silent' }),
    concurrency: 2,
    leaseMs: 5_000,
    pollMs: 50,
    workDir: path.join(dir, 'work'),
    suites: new SuiteCache({ dir: path.join(dir, 'cache'), maxBytes: 1024 * 1024 * 1024, fetchArchive: server.fetchArchive }),
  });
}

async function ended(members: FakeMember[], timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (members.some((m) => m.status !== 'SUCCESS' && m.status !== 'FAIL')) {
    if (Date.now() > until) throw new Error(`members still ${members.map((m) => m.status).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const versionSpec = (name: string, marker: string): CommandTestSpec => ({ ...commandSpec(name, [marker]), cwd: path.posix.join(VERSION_ROOT, 'tests') }) as CommandTestSpec;

test("two sets of two versions run at once, each member in its own version's files", async () => {
  const link = new FakeLink();
  const server = new ArchiveServer();
  const v1 = await makeArchive({ 'runset.config.yaml': 'tests: []\n', 'tests/marker.txt': 'one' });
  const v2 = await makeArchive({ 'runset.config.yaml': 'tests: []\n', 'tests/marker.txt': 'two' });
  server.add(v1);
  server.add(v2);
  link.suites.set('s1', v1.id);
  link.suites.set('s2', v2.id);
  const members = [...link.add('s1', [versionSpec('a', 'one'), versionSpec('b', 'one')]), ...link.add('s2', [versionSpec('c', 'two')])];
  const ran: string[] = [];
  const pool = await poolWith(link, server, ran);
  pool.start();
  try {
    await ended(members);
  } finally {
    await pool.stop(0);
  }
  assert.deepEqual(members.map((m) => [m.status, m.outcome?.error ?? null]), [['SUCCESS', null], ['SUCCESS', null], ['SUCCESS', null]]);
  assert.ok(ran.every((cwd) => cwd.endsWith(path.join('tests')) && !cwd.startsWith(VERSION_ROOT)), `relocated: ${ran.join(', ')}`);
  assert.deepEqual([...new Set(server.fetched)].sort(), [v1.id, v2.id].sort());
});

test('a version that cannot be made ready ends every member FAIL with why', async () => {
  const link = new FakeLink();
  const server = new ArchiveServer();
  const v = await makeArchive({ 'runset.config.yaml': 'tests: []\n', 'tests/marker.txt': 'one' });
  const tampered = await makeArchive({ 'runset.config.yaml': 'tests: []\n', 'tests/marker.txt': 'evil' });
  server.add(v, tampered.bytes);
  link.suites.set('s', v.id);
  const members = link.add('s', [versionSpec('a', 'one'), versionSpec('b', 'one')]);
  const ran: string[] = [];
  const pool = await poolWith(link, server, ran);
  pool.start();
  try {
    await ended(members);
  } finally {
    await pool.stop(0);
  }
  for (const m of members) {
    assert.equal(m.status, 'FAIL');
    assert.match(m.outcome?.error ?? '', new RegExp(`suite version ${v.id} arrived with other bytes`));
  }
  assert.deepEqual(ran, [], 'nothing ran');
});
