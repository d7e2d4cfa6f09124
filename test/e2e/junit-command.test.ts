/**
 * `junit:` on a command entry: the command keeps its one member and its exit
 * code's verdict, and each `<testcase>` of the JUnit XML it wrote becomes a
 * case of that member's result, in the members list. A report left from an
 * earlier run (older than the command's start) is not read, and the member's
 * output says so. `artifacts:` on a command keeps the files it wrote, every
 * attempt's.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet } from '../helpers/server.js';
import { junitCommandEntry, REPORT } from './junit-fixtures.js';

after(() => assertNoLeakedServers());


interface Member {
  name: string;
  status: string;
  output: string | null;
  cases: Array<{ name: string; status: string; durationMs: number; error: string | null }>;
  attempts: number;
  artifacts: Array<{ name: string; contentType: string; url: string }>;
}

/** Writes out/attempt-N.txt, failing its first attempt. */
const WRITE = `const fs = require('node:fs');
fs.mkdirSync('out/logs', { recursive: true });
const n = fs.readdirSync('out').length;
fs.writeFileSync('out/attempt-' + n + '.txt', 'attempt ' + n);
fs.writeFileSync('out/logs/run.log', 'log of attempt ' + n);
process.exit(n === 1 ? 1 : 0);
`;

test('a junit: command keeps one member, its exit code decides, and its report\'s three <testcase>s are its cases', async () => {
  const dir = tempDir('runset-junit-');
  mkdirSync(path.join(dir, 'stale', 'reports'), { recursive: true });
  const stale = path.join(dir, 'stale', 'reports', 'old.xml');
  writeFileSync(stale, REPORT);
  utimesSync(stale, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
  mkdirSync(path.join(dir, 'files'));
  writeFileSync(path.join(dir, 'files', 'write.js'), WRITE);
  const server = await startRunset({
    config: [
      'environments:',
      '  e2e: { variables: { TOKEN: "${env:JUNIT_TEST_TOKEN}" } }',
      'tests:',
      junitCommandEntry('api', dir),
      `  - { name: stale, type: command, run: [${JSON.stringify(process.execPath)}, -e, "0"], cwd: ${JSON.stringify(path.join(dir, 'stale'))}, junit: reports/old.xml }`,
      `  - { name: files, type: command, run: [${JSON.stringify(process.execPath)}, write.js], cwd: ${JSON.stringify(path.join(dir, 'files'))}, retries: 1, artifacts: ["out/**/*.txt", "out/logs/*.log"] }`,
      '',
    ].join('\n'),
    env: { JUNIT_TEST_TOKEN: 's3cret-value' },
  });
  try {
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'e2e' } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.testRunSetId as string;
    await waitForSet(server, id, 60_000);
    const members = (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
    const apiMember = members.find((m) => m.name === 'api')!;
    assert.equal(apiMember.status, 'FAIL', 'the exit code decides');
    assert.deepEqual(apiMember.cases, [
      { name: 'api.Users › creates a user', status: 'passed', durationMs: 12, error: null },
      { name: 'api.Users › rejects a duplicate', status: 'failed', durationMs: 400, error: 'expected 409, got 200 for token ***' },
      { name: 'api.Users › is pending', status: 'skipped', durationMs: 0, error: null },
    ]);
    const staleMember = members.find((m) => m.name === 'stale')!;
    assert.equal(staleMember.status, 'SUCCESS');
    assert.deepEqual(staleMember.cases, []);
    assert.match(staleMember.output ?? '', /junit: no file matching "reports\/old\.xml" .* was written by this run/);
    const files = members.find((m) => m.name === 'files')!;
    assert.equal(files.status, 'SUCCESS');
    assert.equal(files.attempts, 2);
    const kept = [...files.artifacts].sort((a, b) => a.name.localeCompare(b.name));
    assert.deepEqual(kept.map((a) => [a.name, a.contentType]), [['attempt-1.txt', 'text/plain'], ['attempt-2.txt', 'text/plain'], ['run.log', 'text/plain']], 'every attempt\'s files, each path once');
    const second = await fetch(server.url.replace(/\/api$/, '') + kept[1]!.url, { headers: { authorization: `Bearer ${server.apiKey}` } });
    assert.equal(await second.text(), 'attempt 2');
  } finally {
    await server.stop();
  }
});
