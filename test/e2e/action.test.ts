/**
 * The committed GitHub Action bundle, run as the runner runs it: `node
 * action/main.mjs` then `node action/post.mjs`, from a copy of action/ in a
 * folder with no node_modules, with only the runner's variables (inputs as
 * INPUT_*, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_STATE, then the saved
 * state as STATE_*), against a real `runset serve`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { inputVariable } from '../../src/action/inputs.js';
import { api, assertNoLeakedServers, REPO_ROOT, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';

const CONFIG = `
environments:
  staging:
    variables:
      GREETING: hello
  preview:
    allowSuiteUploads: true
tests:
  - name: greets
    type: command
    run: [node, -e, "process.exit(process.env.GREETING === 'hello' ? 0 : 1)"]
  - name: also passes
    type: command
    run: [node, -e, "0"]
  - name: sleeper
    type: command
    tags: [slow]
    run: [node, -e, "setTimeout(() => {}, 60000)"]
`;

/** action/ copied alone: what runs needs nothing beside it. */
const actionDir = path.join(tempDir('runset-action-'), 'action');
mkdirSync(actionDir);
for (const file of ['main.mjs', 'post.mjs', 'runset.mjs']) copyFileSync(path.join(REPO_ROOT, 'action', file), path.join(actionDir, file));

/** A step's files, as the runner prepares them. */
function stepFiles() {
  const dir = tempDir('runset-runner-');
  const files = { GITHUB_OUTPUT: path.join(dir, 'output'), GITHUB_STEP_SUMMARY: path.join(dir, 'summary'), GITHUB_STATE: path.join(dir, 'state') };
  for (const file of Object.values(files)) writeFileSync(file, '');
  return { dir, ...files };
}

/** `name=value` and `name<<DELIM … DELIM` entries of a runner file. */
function readCommandFile(file: string): Record<string, string> {
  const lines = readFileSync(file, 'utf8').split('\n');
  const values: Record<string, string> = {};
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2]!, i + 1);
      values[heredoc[1]!] = lines.slice(i + 1, end).join('\n');
      i = end;
    } else if (line.includes('=')) values[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
  }
  return values;
}

interface Step {
  proc: ChildProcess;
  done: Promise<{ code: number | null; stderr: string; stdout: string }>;
  stderr: () => string;
}

function runStep(entry: 'main.mjs' | 'post.mjs', env: Record<string, string>, cwd: string): Step {
  // Only what a runner gives a step: PATH, the workspace, the files and the inputs. No NODE_PATH, no node_modules.
  const proc = spawn(process.execPath, [path.join(actionDir, entry)], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const done = new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => proc.on('close', (code) => resolve({ code, stderr, stdout })));
  return { proc, done, stderr: () => stderr };
}

/** The runner's variables for a step of this action: inputs with action.yml's defaults, the files, the CI context. */
function runnerEnv(server: RunningServer, files: ReturnType<typeof stepFiles>, inputs: Record<string, string>): Record<string, string> {
  const withDefaults: Record<string, string> = { interval: '10s', timeout: '10m', overrides: '', junit: '', suite: '', 'suite-name': '', tags: '', grep: '', 'grep-invert': '', tests: '', projects: '', url: server.url, 'api-key': server.apiKey, ...inputs };
  return {
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: files.dir,
    GITHUB_OUTPUT: files.GITHUB_OUTPUT,
    GITHUB_STEP_SUMMARY: files.GITHUB_STEP_SUMMARY,
    GITHUB_STATE: files.GITHUB_STATE,
    GITHUB_SHA: 'a'.repeat(40),
    GITHUB_REF_NAME: 'main',
    ...Object.fromEntries(Object.entries(withDefaults).map(([name, value]) => [inputVariable(name), value])),
  };
}

/** The post step's variables: the same inputs, and the state the main step saved as STATE_*. */
function postEnv(mainEnv: Record<string, string>, files: ReturnType<typeof stepFiles>): Record<string, string> {
  const state = Object.fromEntries(Object.entries(readCommandFile(files.GITHUB_STATE)).map(([name, value]) => [`STATE_${name}`, value]));
  const { GITHUB_STATE: _unused, ...rest } = mainEnv;
  return { ...rest, ...state };
}

async function until(what: string, check: () => boolean, step: Step, withinMs = 20_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline || step.proc.exitCode !== null) throw new Error(`timed out waiting for ${what}; the step said:\n${step.stderr()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('the GitHub Action bundle under a runner\'s environment', () => {
  let server: RunningServer;
  before(async () => {
    server = await startRunset({ config: CONFIG });
  });
  after(async () => {
    await server.stop();
    assertNoLeakedServers();
  });

  test('main creates the set with its inputs, waits, writes outputs and summary, exits 0; post has nothing to do', async () => {
    const files = stepFiles();
    const env = runnerEnv(server, files, { env: 'staging', interval: '100ms', overrides: 'GREETING=hello\n# not this one', tests: 'greets\nalso passes', junit: 'reports/junit.xml' });
    const main = await runStep('main.mjs', env, files.dir).done;
    assert.equal(main.code, 0, main.stderr);
    assert.equal(main.stdout, '', 'stdout stays empty (the runner would read workflow commands from it)');

    const outputs = readCommandFile(files.GITHUB_OUTPUT);
    const id = outputs['test-run-set-id']!;
    assert.ok(id, 'the id is an output');
    assert.equal(outputs.status, 'SUCCESS');
    assert.equal(outputs['dashboard-url'], `${server.url.replace(/\/api$/, '')}/sets/${id}`);
    const summary = readFileSync(files.GITHUB_STEP_SUMMARY, 'utf8');
    assert.match(summary, /runset: SUCCESS — env `staging`/);
    assert.ok(summary.includes(`](${outputs['dashboard-url']})`), 'the summary links the dashboard');
    assert.ok(existsSync(path.join(files.dir, 'reports', 'junit.xml')), 'the JUnit path is relative to the workspace');

    const set = await api<{ labels: Record<string, string> }>(server, 'GET', `/v0/test-run-sets/${id}/details`);
    assert.equal(set.body.labels.commit, 'a'.repeat(40), 'the CI context became labels');
    const runs = await api<{ testRuns: Array<{ name: string }> }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`);
    assert.deepEqual(runs.body.testRuns.map((r) => r.name).sort(), ['also passes', 'greets'], 'the tests input selected the members');
    assert.equal(main.stderr.includes(server.apiKey), false, 'the key is never printed');

    const state = readCommandFile(files.GITHUB_STATE);
    assert.equal(state['set-id'], id);
    const post = await runStep('post.mjs', postEnv(env, files), files.dir).done;
    assert.equal(post.code, 0, post.stderr);
    assert.match(post.stderr, /saw test run set .* to its end; nothing to clean up/);
  });

  test('suite: the bundled packer uploads the workspace folder, and the set runs its tests under suite-name', async () => {
    const files = stepFiles();
    const suiteDir = path.join(files.dir, 'e2e');
    mkdirSync(suiteDir);
    writeFileSync(path.join(suiteDir, 'runset.config.yaml'), 'tests:\n  - { name: from the upload, type: command, run: [node, check.js] }\n');
    writeFileSync(path.join(suiteDir, 'check.js'), "console.log('uploaded file ran')\n");
    const env = runnerEnv(server, files, { env: 'preview', interval: '100ms', suite: 'e2e', 'suite-name': 'pr-7' });
    const main = await runStep('main.mjs', env, files.dir).done;
    assert.equal(main.code, 0, main.stderr);
    const id = readCommandFile(files.GITHUB_OUTPUT)['test-run-set-id']!;
    const runs = await api<{ testRuns: Array<{ name: string; status: string }> }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`);
    assert.deepEqual(runs.body.testRuns.map((r) => [r.name, r.status]), [['from the upload', 'SUCCESS']]);
    const suites = await api<{ versions: Array<{ names: string[] }> }>(server, 'GET', '/v0/suites');
    assert.ok(suites.body.versions.some((v) => v.names.includes('pr-7')), 'published under the suite-name');
  });

  test('a failing set: exit 1, status FAIL, an ::error annotation', async () => {
    const files = stepFiles();
    const env = runnerEnv(server, files, { env: 'staging', interval: '100ms', overrides: 'GREETING=bye', tests: 'greets' });
    const main = await runStep('main.mjs', env, files.dir).done;
    assert.equal(main.code, 1, main.stderr);
    assert.equal(readCommandFile(files.GITHUB_OUTPUT).status, 'FAIL');
    assert.match(main.stderr, /^::error title=runset%3A greets::/m);
    assert.match(readFileSync(files.GITHUB_STEP_SUMMARY, 'utf8'), /\| ❌ failed \| greets \|/);
  });

  test('a bad input fails the step with exit 3 and says which', async () => {
    const files = stepFiles();
    const main = await runStep('main.mjs', runnerEnv(server, files, { env: 'staging', interval: 'soon' }), files.dir).done;
    assert.equal(main.code, 3);
    assert.match(main.stderr, /--interval/);
  });

  test('a job cancel: SIGTERM to main cancels the set, and the post step finds it ended', async () => {
    const { files, env, main, id } = await startSlowSet();
    await until('the sleeper to run', () => /RUNNING/.test(main.stderr()) || main.stderr().includes('running'), main);
    main.proc.kill('SIGTERM');
    const ended = await main.done;
    assert.equal(ended.code, 3, ended.stderr);
    assert.match(ended.stderr, new RegExp(`received SIGTERM; cancelled test run set ${id}`));
    const set = await waitForSet(server, id);
    assert.equal(set.status, 'FAIL');
    const post = await runStep('post.mjs', postEnv(env, files), files.dir).done;
    assert.equal(post.code, 0, post.stderr);
    assert.match(post.stderr, /nothing to clean up/);
  });

  /** A main step following a set whose one test sleeps for a minute, once its id is saved for the post step. */
  async function startSlowSet() {
    const files = stepFiles();
    const env = runnerEnv(server, files, { env: 'staging', interval: '100ms', tags: 'slow' });
    const main = runStep('main.mjs', env, files.dir);
    await until('the set id in the state file', () => readCommandFile(files.GITHUB_STATE)['set-id'] !== undefined, main);
    return { files, env, main, id: readCommandFile(files.GITHUB_STATE)['set-id']! };
  }

  test('a main step killed before it could cancel: the post step cancels the set', async () => {
    const { files, env, main, id } = await startSlowSet();
    main.proc.kill('SIGKILL');
    await main.done;
    assert.equal((await api<{ status: string }>(server, 'GET', `/v0/test-run-sets/${id}`)).body.status !== 'SUCCESS', true);
    const post = await runStep('post.mjs', postEnv(env, files), files.dir).done;
    assert.equal(post.code, 0, post.stderr);
    assert.match(post.stderr, new RegExp(`cancelled test run set ${id}`));
    const set = await waitForSet(server, id);
    assert.equal(set.status, 'FAIL');
    const runs = await api<{ testRuns: Array<{ name: string; error: string | null }> }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`);
    assert.match(runs.body.testRuns[0]!.error ?? '', /cancel/i);
  });
});
