/**
 * What `trigger --wait` leaves behind: the JUnit file (parsed back with
 * xmlbuilder2), the GitHub step summary, annotations and outputs — and that the
 * API key is in none of them, even when the server echoes it back.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { convert } from 'xmlbuilder2';
import { runTriggerCommand } from '../../src/cli/trigger.js';
import { assertNoLeakedFakeServers, collector, membersReply, problem, sequence, SET_ID, startFakeServer, statusReply, type Routes } from './fake-server.js';

after(assertNoLeakedFakeServers);

const KEY = 'rs_test_reports_9f8e7d6c5b4a3210SECRET';
const FAST = ['--interval', '50ms'];

type Xml = Record<string, unknown>;
const asArray = (value: unknown): Xml[] => (Array.isArray(value) ? (value as Xml[]) : value === undefined ? [] : [value as Xml]);

function testcases(xml: string): Xml[] {
  const doc = convert(xml, { format: 'object' }) as { testsuites: { testsuite: Xml } };
  return asArray(doc.testsuites.testsuite.testcase);
}

async function run(routes: Routes, argv: string[], env: Record<string, string> = {}) {
  const server = await startFakeServer(routes);
  try {
    const io = collector();
    const code = await runTriggerCommand(argv, { RUNSET_URL: server.url, RUNSET_API_KEY: KEY, ...env }, io);
    return { code, out: io.out(), err: io.err(), server };
  } finally {
    await server.close();
  }
}

const MIXED: Routes = {
  status: sequence(statusReply('RUNNING', { RUNNING: 3 }), statusReply('FAIL', { SUCCESS: 2, FAIL: 1 })),
  members: () =>
    membersReply([
      { name: 'home page answers', status: 'SUCCESS', durationMs: 250 },
      { name: 'checkout', status: 'FAIL', error: 'expected status 200, got 500\nsecond line', output: 'step 1\n\u001b[31mboom\u001b[0m\u0000\nstep 3', durationMs: 3200 },
      { name: 'login', status: 'SUCCESS', attempts: 2, durationMs: 900 },
    ]),
};

test('JUnit: one testcase per member, failures with error and output tail, flaky members marked, not hidden', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-junit-'));
  const file = path.join(dir, 'nested', 'junit.xml');
  const r = await run(MIXED, ['--env', 'staging', '--wait', '--junit', file, ...FAST]);
  assert.equal(r.code, 1);
  const xml = readFileSync(file, 'utf8');
  assert.ok(!xml.includes('\u001b') && !xml.includes('\u0000'), 'no control characters in the XML');
  const cases = testcases(xml);
  assert.deepEqual(cases.map((c) => c['@name']), ['home page answers', 'checkout', 'login']);
  assert.equal(cases[0]?.['@time'], '0.250');
  assert.equal(cases[0]?.failure, undefined);

  const failure = cases[1]?.failure as Xml;
  assert.equal(failure['@message'], 'expected status 200, got 500');
  assert.match(String(failure['#']), /second line/);
  assert.match(String(failure['#']), /boom/);

  const flaky = cases[2] as Xml;
  assert.equal(flaky.failure, undefined, 'a flaky member passed');
  const props = asArray((flaky.properties as Xml).property);
  assert.deepEqual(props.map((p) => [p['@name'], p['@value']]), [['flaky', 'true'], ['attempts', '2']]);
  assert.match(String(flaky['system-out']), /flaky: passed after 2 attempts/);
  assert.match(r.err, /⚠ login \[command\]: flaky, passed after 2 attempts/);
  assert.match(r.err, /wrote JUnit report/);
});

test('JUnit: the server flag `flaky: true` marks a member even with one attempt', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-junit-'));
  const file = path.join(dir, 'junit.xml');
  const routes: Routes = { status: () => statusReply('SUCCESS', { SUCCESS: 1 }), members: () => membersReply([{ name: 'wobbly', status: 'SUCCESS', attempts: 1, flaky: true }]) };
  const r = await run(routes, ['--env', 'staging', '--wait', '--junit', file, ...FAST]);
  assert.equal(r.code, 0);
  const props = asArray((testcases(readFileSync(file, 'utf8'))[0]?.properties as Xml).property);
  assert.equal(props[0]?.['@name'], 'flaky');
});

test('JUnit without a members endpoint (404 ignored): one testcase for the whole set', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-junit-'));
  const file = path.join(dir, 'junit.xml');
  const routes: Routes = { status: () => statusReply('FAIL', { SUCCESS: 3, FAIL: 2 }), members: () => problem(404, 'not_found', 'Route not found') };
  const r = await run(routes, ['--env', 'staging', '--wait', '--junit', file, ...FAST]);
  assert.equal(r.code, 1, r.err);
  assert.ok(!/could not list/.test(r.err), 'a 404 is not worth a warning');
  const cases = testcases(readFileSync(file, 'utf8'));
  assert.equal(cases.length, 1);
  assert.match(String(cases[0]?.['@name']), new RegExp(SET_ID));
  assert.equal((cases[0]?.failure as Xml)['@message'], '2 of 5 tests failed');
  assert.equal(cases[0]?.['@time'], '12.500', 'the set duration from startedAt/endedAt');
});

test('JUnit after a timeout: unfinished members are errors', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-junit-'));
  const file = path.join(dir, 'junit.xml');
  const routes: Routes = {
    status: () => statusReply('RUNNING', { RUNNING: 1, SUCCESS: 1 }),
    members: () => membersReply([{ name: 'quick', status: 'SUCCESS' }, { name: 'slow', status: 'RUNNING' }]),
  };
  const r = await run(routes, ['--env', 'staging', '--wait', '--timeout', '250ms', '--junit', file, ...FAST]);
  assert.equal(r.code, 2);
  const cases = testcases(readFileSync(file, 'utf8'));
  assert.match(String((cases[1]?.error as Xml)['@message']), /not finished when the trigger timed out \(status RUNNING\)/);
});

test('an unwritable --junit path turns a success into exit 3, and a FAIL keeps exit 1', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-junit-'));
  const blocker = path.join(dir, 'file');
  writeFileSync(blocker, 'x');
  const ok: Routes = { status: () => statusReply('SUCCESS', { SUCCESS: 1 }) };
  const r = await run(ok, ['--env', 'staging', '--wait', '--junit', path.join(blocker, 'junit.xml'), ...FAST]);
  assert.equal(r.code, 3);
  assert.match(r.err, /could not write the JUnit report/);
  const failed = await run({ status: () => statusReply('FAIL', { FAIL: 1 }) }, ['--env', 'staging', '--wait', '--junit', path.join(blocker, 'junit.xml'), ...FAST]);
  assert.equal(failed.code, 1);
});

test('GitHub: step summary table, escaped ::error annotations on stderr, outputs; stdout untouched', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-gh-'));
  const summary = path.join(dir, 'summary.md');
  const output = path.join(dir, 'output');
  writeFileSync(summary, '# earlier step\n');
  const env = { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary, GITHUB_OUTPUT: output };
  const r = await run(MIXED, ['--env', 'staging', '--wait', ...FAST], env);
  assert.equal(r.code, 1);
  assert.equal(r.out, '');

  const md = readFileSync(summary, 'utf8');
  assert.ok(md.startsWith('# earlier step\n'), 'appended, not overwritten');
  assert.match(md, /runset: FAIL — env `staging`/);
  assert.match(md, /\| ❌ failed \| checkout \| command \| 1 \| 3\.2s \| expected status 200, got 500 \|/);
  assert.match(md, /\| ⚠️ flaky \| login \|/);

  assert.match(r.err, /^::error title=runset%3A checkout::expected status 200, got 500%0Asecond line$/m);
  assert.match(r.err, /^::warning title=runset flaky%3A login::passed after 2 attempts$/m);
  const page = `${r.server.url.replace(/\/api$/, '')}/sets/${SET_ID}`;
  assert.equal(readFileSync(output, 'utf8'), `test-run-set-id=${SET_ID}\ndashboard-url=${page}\nstatus=FAIL\n`);
  assert.ok(md.includes(`[Test Run Set \`${SET_ID}\`](${page})`), 'the summary links the set\'s dashboard page');
});

test('GitHub outputs without --wait: only the id', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-gh-'));
  const output = path.join(dir, 'output');
  const r = await run({}, ['--env', 'staging'], { GITHUB_OUTPUT: output });
  assert.equal(r.code, 0);
  assert.equal(readFileSync(output, 'utf8'), `test-run-set-id=${SET_ID}\ndashboard-url=${r.server.url.replace(/\/api$/, '')}/sets/${SET_ID}\n`);
});

test('the API key appears in no output and no file, even when the server echoes it back', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-leak-'));
  const files = { junit: path.join(dir, 'junit.xml'), summary: path.join(dir, 'summary.md'), output: path.join(dir, 'output') };
  const echo = (req: { headers: Record<string, unknown> }) => `you sent ${String(req.headers.authorization)}`;
  const routes: Routes = {
    create: sequence(problem(503, 'internal', 'placeholder'), { body: { testRunSetId: SET_ID } }),
    status: (req, n) => (n === 0 ? problem(503, 'internal', echo(req)) : { ...statusReply('FAIL', { FAIL: 1 }), headers: { 'x-echo': echo(req) } }),
    members: (req) => membersReply([{ name: `test ${KEY}`, status: 'FAIL', error: echo(req), output: `env: RUNSET_API_KEY=${KEY}` }]),
  };
  const env = { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: files.summary, GITHUB_OUTPUT: files.output };
  const r = await run(routes, ['--env', 'staging', '--wait', '--json', '--junit', files.junit, ...FAST], env);
  assert.equal(r.code, 1, r.err);
  assert.match(r.err, /you sent Bearer \*\*\*/, 'the echo was shown, redacted');
  for (const [where, text] of [['stdout', r.out], ['stderr', r.err], ...Object.entries(files).map(([k, f]) => [k, readFileSync(f, 'utf8')])]) {
    assert.ok(!String(text).includes(KEY), `the key leaked into ${where}`);
  }

  const unauthorized: Routes = { create: (req) => problem(401, 'unauthorized', echo(req)) };
  const denied = await run(unauthorized, ['--env', 'staging']);
  assert.equal(denied.code, 3);
  assert.ok(!denied.err.includes(KEY) && !denied.out.includes(KEY));
});
