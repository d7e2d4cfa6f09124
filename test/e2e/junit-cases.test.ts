/**
 * The cases of a `junit:` command beyond the members list: `runset trigger
 * --junit` writes each case as a <testcase> of a suite named after the member
 * (its failure with its message, its skip), and each case that ran is a test
 * of its own in GET /v0/tests and /v0/tests/history, named "<member> › <case>"
 * (the flakiness of case runs is the store history contract's).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { convert } from 'xmlbuilder2';
import { api, assertNoLeakedServers, CLI, startRunset, tempDir, type RunningServer } from '../helpers/server.js';
import { junitCommandEntry } from './junit-fixtures.js';

after(() => assertNoLeakedServers());

function trigger(server: RunningServer, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RUNSET_') && !k.startsWith('GITHUB_')));
  const child = spawn(process.execPath, [CLI, 'trigger', ...args], { env: { ...env, RUNSET_URL: server.url, RUNSET_API_KEY: server.apiKey }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

type Xml = Record<string, unknown>;
const list = (x: unknown): Xml[] => (Array.isArray(x) ? (x as Xml[]) : x === undefined ? [] : [x as Xml]);

test('a junit: command\'s three cases: in the trigger\'s JUnit under the member\'s suite, and in test history', { timeout: 120_000 }, async () => {
  const dir = tempDir('runset-junit-cases-');
  const server = await startRunset({
    config: ['environments:', '  e2e: { variables: { TOKEN: "${env:JUNIT_TEST_TOKEN}" } }', 'tests:', junitCommandEntry('api', dir), ''].join('\n'),
    env: { JUNIT_TEST_TOKEN: 's3cret-value' },
  });
  try {
    const junit = path.join(tempDir(), 'junit.xml');
    const r = await trigger(server, ['--env', 'e2e', '--wait', '--interval', '100ms', '--timeout', '60s', '--label', 'commit=c1', '--junit', junit]);
    assert.equal(r.code, 1, r.err);
    const xml = readFileSync(junit, 'utf8');
    assert.ok(!xml.includes('s3cret-value'), 'the secret stays masked');
    const doc = convert(xml, { format: 'object' }) as { testsuites: Xml };
    assert.equal(doc.testsuites['@tests'], '4', 'the member and its three cases');
    assert.equal(doc.testsuites['@failures'], '2');
    assert.equal(doc.testsuites['@skipped'], '1');
    const suites = list(doc.testsuites.testsuite);
    assert.deepEqual(suites.map((s) => s['@name']), ['runset e2e', 'api']);
    assert.deepEqual(list(suites[0]!.testcase).map((c) => [c['@name'], c.failure !== undefined]), [['api', true]], 'the member keeps its exit code\'s verdict');
    const cases = list(suites[1]!.testcase);
    assert.deepEqual(cases.map((c) => [c['@name'], c['@time']]), [['api.Users › creates a user', '0.012'], ['api.Users › rejects a duplicate', '0.400'], ['api.Users › is pending', '0.000']]);
    assert.deepEqual(cases.map((c) => [c.failure !== undefined, c.skipped !== undefined]), [[false, false], [true, false], [false, true]]);
    assert.equal((cases[1]!.failure as Xml)['@message'], 'expected 409, got 200 for token ***');

    const second = await trigger(server, ['--env', 'e2e', '--wait', '--interval', '100ms', '--timeout', '60s', '--label', 'commit=c1']);
    assert.equal(second.code, 1, second.err);

    const tests = await api<{ tests: Array<{ name: string; type: string; runs: number; passRate: number | null; flakyRate: number | null; lastFailure: { error: string | null } | null }> }>(
      server, 'GET', '/v0/tests?env=e2e',
    );
    assert.equal(tests.status, 200, tests.text);
    assert.deepEqual(tests.body.tests.map((t) => [t.name, t.type, t.runs, t.passRate]), [
      ['api', 'command', 2, 0],
      ['api › api.Users › creates a user', 'junit', 2, 1],
      ['api › api.Users › rejects a duplicate', 'junit', 2, 0],
    ], 'the skipped case has no run, so no test');
    const duplicate = tests.body.tests[2]!;
    assert.equal(duplicate.lastFailure?.error, 'expected 409, got 200 for token ***');
    assert.equal(duplicate.flakyRate, 0, 'it failed both times: not flaky');

    const history = await api<{ runs: Array<{ result: string; error: string | null; labels: Record<string, string> }> }>(
      server, 'GET', `/v0/tests/history?env=e2e&name=${encodeURIComponent('api › api.Users › rejects a duplicate')}`,
    );
    assert.equal(history.status, 200, history.text);
    assert.deepEqual(history.body.runs.map((run) => [run.result, run.error, run.labels.commit]), [
      ['FAIL', 'expected 409, got 200 for token ***', 'c1'],
      ['FAIL', 'expected 409, got 200 for token ***', 'c1'],
    ]);
  } finally {
    await server.stop();
  }
});
