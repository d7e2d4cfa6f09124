/**
 * A framework entry in a suite that travels with the set, end to end on real
 * processes: `runset trigger --suite DIR --wait` lists a Vitest suite with the
 * checkout's own Vitest, ships the listing in the archive, and the server (on
 * SQLite, with its direct workers) expands it into one member per case and
 * runs the shares with the version's Vitest: outcomes and a failing case's
 * error are Vitest's. A suite whose Vitest listing fails is refused at push,
 * with Vitest's own words, before anything is uploaded.
 *
 * Vitest is installed once from npm (test/helpers/framework-versions.ts); a
 * folder's node_modules link to it serves both the checkout (the suite folder
 * is inside it) and the worker's suite cache (also inside it), as a version
 * without a lockfile finds its framework from its folder upwards.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, runsetCli as cli, startRunset, tempDir, type RunningServer } from '../helpers/server.js';
import { frameworkModules, RegistryUnreachable } from '../helpers/framework-versions.js';

const VITEST = '4.1.12';

interface Member { name: string; status: string; skipped: boolean; error: string | null }

/** A Vitest suite folder under `root`: its config names one vitest entry; `files` are its test files. */
function vitestSuite(root: string, name: string, files: Record<string, string>): string {
  const dir = path.join(root, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, file), text);
  writeFileSync(path.join(dir, 'runset.config.yaml'), 'tests:\n  - { name: marker, type: command, run: [node, -e, "console.log(1)"] }\n  - { name: unit, type: vitest, dir: ., workers: 1 }\n');
  return dir;
}

const SERVER_CONFIG = `
environments:
  preview: { allowSuiteUploads: true }
tests:
  - { name: server own, type: command, run: [node, -e, "console.log('server own')"] }
`;

after(() => assertNoLeakedServers());

describe('a Vitest entry in an uploaded suite version', () => {
  let server: RunningServer | undefined;
  let root = '';
  let unreachable: string | undefined;

  before(async () => {
    let modules: string;
    try {
      modules = await frameworkModules('vitest', VITEST);
    } catch (error) {
      if (!(error instanceof RegistryUnreachable)) throw error;
      unreachable = error.message;
      return;
    }
    root = tempDir('runset-suite-vitest-');
    symlinkSync(modules, path.join(root, 'node_modules'), 'dir');
    server = await startRunset({ config: SERVER_CONFIG, args: ['--workers', '2', '--suite-cache', path.join(root, 'cache'), '--poll', '300ms'] });
  });
  after(async () => server?.stop());

  test('trigger --suite lists it at push, the server makes one member per case, the worker runs them with the version\'s Vitest', { timeout: 150_000 }, async (t) => {
    if (unreachable) return t.skip(unreachable);
    const dir = vitestSuite(root, 'good', {
      'math.test.js': `import { describe, expect, test } from 'vitest';
describe('math', () => {
  test('adds', () => { expect(1 + 1).toBe(2); });
  test('breaks', () => { expect(1 + 1).toBe(3); });
  test['skip']('later', () => {}); // a declared skip in the uploaded suite: runset must report it as skipped
});
`,
      'text.test.js': "import { expect, test } from 'vitest';\ntest('upper', () => { expect('a'.toUpperCase()).toBe('A'); });\n",
    });
    const res = await cli(server!, ['trigger', '--env', 'preview', '--suite', dir, '--wait', '--json', '--timeout', '120s']);
    assert.notEqual(res.code, 0, 'a failing case fails the set');
    const set = JSON.parse(res.stdout) as { id: string; status: string };
    assert.equal(set.status, 'FAIL', res.stderr);
    const members = (await api<{ testRuns: Member[] }>(server!, 'GET', `/v0/test-run-sets/${set.id}/test-runs`)).body.testRuns;
    const byName = new Map(members.map((m) => [m.name, m]));
    assert.deepEqual([...byName.keys()].sort(), ['marker', 'math.test.js › math › adds', 'math.test.js › math › breaks', 'math.test.js › math › later', 'text.test.js › upper'], 'one member per case, named as Vitest names it, beside the version\'s command; none of the server\'s own');
    assert.equal(byName.get('math.test.js › math › adds')?.status, 'SUCCESS');
    assert.equal(byName.get('text.test.js › upper')?.status, 'SUCCESS');
    assert.equal(byName.get('math.test.js › math › later')?.skipped, true);
    const broken = byName.get('math.test.js › math › breaks');
    assert.equal(broken?.status, 'FAIL');
    assert.match(broken?.error ?? '', /expected 2 to be 3/, 'the failing case carries Vitest\'s own words');
  });

  test('a suite whose Vitest listing fails is refused at push with Vitest\'s words (exit 3), and nothing is uploaded', { timeout: 120_000 }, async (t) => {
    if (unreachable) return t.skip(unreachable);
    const before = (await api<{ versions: unknown[] }>(server!, 'GET', '/v0/suites')).body.versions.length;
    const dir = vitestSuite(root, 'broken', { 'broken.test.js': "import { test } from 'vitest';\ntest('never', () => {\n" });
    const res = await cli(server!, ['suites', 'push', dir]);
    assert.equal(res.code, 3, res.stderr);
    assert.match(res.stderr, /tests\[1\]/, 'names the entry');
    assert.match(res.stderr, /Vitest suite "unit".*cannot be listed: broken\.test\.js: Failed to parse source .*invalid JS syntax/, res.stderr);
    assert.equal((await api<{ versions: unknown[] }>(server!, 'GET', '/v0/suites')).body.versions.length, before, 'nothing was uploaded');
  });
});
