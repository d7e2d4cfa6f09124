/**
 * The committed action bundle cannot drift from its source: it is rebuilt here
 * and compared byte for byte. And action.yml, the inputs table
 * (src/action/inputs.ts) and the bundle's entry points agree.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ACTION_BUNDLE, buildActionBundle } from '../../src/action/build.js';
import { ACTION_INPUTS, inputVariable, missingInputs, triggerInvocation } from '../../src/action/inputs.js';
import { REPO_ROOT } from '../helpers/server.js';

interface ActionYaml {
  inputs: Record<string, { required?: boolean; default?: string }>;
  outputs: Record<string, { description: string }>;
  runs: { using: string; main: string; post: string };
}

const actionYaml = parse(readFileSync(path.join(REPO_ROOT, 'action.yml'), 'utf8')) as ActionYaml;

test('the committed action/runset.mjs is exactly what `npm run build:action` builds from the source', async () => {
  const built = Buffer.from(await buildActionBundle());
  const committed = readFileSync(ACTION_BUNDLE);
  assert.ok(built.equals(committed), 'action/runset.mjs differs from its source: run `npm run build:action` and commit the result');
});

test('action.yml runs the bundle with the runner\'s Node, main and post', () => {
  assert.equal(actionYaml.runs.using, 'node20');
  for (const entry of [actionYaml.runs.main, actionYaml.runs.post]) {
    const file = path.join(REPO_ROOT, entry);
    assert.ok(existsSync(file), `${entry} exists`);
    assert.match(readFileSync(file, 'utf8'), /from '\.\/runset\.mjs'/, `${entry} runs the bundle`);
  }
  assert.deepEqual(Object.keys(actionYaml.outputs).sort(), ['dashboard-url', 'status', 'test-run-set-id']);
});

test('action.yml and the inputs table list the same inputs, required alike', () => {
  assert.deepEqual(ACTION_INPUTS.map((i) => i.name).sort(), Object.keys(actionYaml.inputs).sort());
  const required = Object.entries(actionYaml.inputs).filter(([, input]) => input.required === true).map(([name]) => name);
  assert.deepEqual(ACTION_INPUTS.filter((i) => i.required).map((i) => i.name).sort(), required.sort());
  assert.deepEqual(missingInputs({ [inputVariable('url')]: 'http://x/api', [inputVariable('env')]: '  ' }), ['api-key', 'env']);
});

test('inputs become trigger flags as the composite action made them', () => {
  const env: Record<string, string> = {
    [inputVariable('url')]: ' http://runset.test/api ',
    [inputVariable('api-key')]: 'k',
    [inputVariable('env')]: 'staging',
    [inputVariable('overrides')]: 'A=1\r\n  # a comment\n\nB=x=y \n',
    [inputVariable('interval')]: '10s',
    [inputVariable('timeout')]: '10m',
    [inputVariable('junit')]: '',
    [inputVariable('tags')]: '@smoke, @fast\n@slow,,',
    [inputVariable('tests')]: 'a › b, c\nd',
    [inputVariable('projects')]: 'chromium\nfirefox',
    [inputVariable('grep')]: 'login|logout',
    [inputVariable('grep-invert')]: '',
    [inputVariable('suite-name')]: 'pr-12',
  };
  assert.equal(inputVariable('grep-invert'), 'INPUT_GREP-INVERT');
  const { argv, env: clientEnv } = triggerInvocation(env);
  assert.deepEqual(clientEnv, { RUNSET_URL: 'http://runset.test/api', RUNSET_API_KEY: 'k' });
  assert.deepEqual(argv, [
    '--wait',
    '--env', 'staging',
    '--override', 'A=1',
    '--override', 'B=x=y ',
    '--interval', '10s',
    '--timeout', '10m',
    '--suite-name', 'pr-12',
    '--tag', '@smoke', '--tag', '@fast', '--tag', '@slow',
    '--grep', 'login|logout',
    '--test', 'a › b, c', '--test', 'd',
    '--project', 'chromium', '--project', 'firefox',
  ]);
});

test('rerun-failed: true reruns the last set on a re-run attempt, without the inputs that describe a new set; cancel-superseded: false turns the CI group off', () => {
  const inputs = {
    [inputVariable('url')]: 'http://runset.test/api',
    [inputVariable('api-key')]: 'k',
    [inputVariable('env')]: 'staging',
    [inputVariable('overrides')]: 'A=1',
    [inputVariable('tags')]: '@smoke',
    [inputVariable('junit')]: 'junit.xml',
    [inputVariable('rerun-failed')]: 'true',
    [inputVariable('cancel-superseded')]: 'false',
  };
  assert.deepEqual(triggerInvocation({ ...inputs, GITHUB_RUN_ATTEMPT: '2' }).argv, ['--wait', '--env', 'staging', '--junit', 'junit.xml', '--rerun-failed', 'last']);
  assert.deepEqual(triggerInvocation({ ...inputs, GITHUB_RUN_ATTEMPT: '1' }).argv, ['--wait', '--env', 'staging', '--override', 'A=1', '--junit', 'junit.xml', '--tag', '@smoke', '--no-ci-group'], 'the first attempt creates a new set');
});
