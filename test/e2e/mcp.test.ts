/**
 * `runset mcp` (stdio, a client of the API) driven by the MCP SDK's own client
 * against a real `serve`: tools and their schemas, a failing set triggered and
 * waited for with progress, its failure read with output and error context,
 * resources, its failures rerun, a test run N times, a `read` key refused, a
 * wait that runs out, a cancel, a suite from a local folder, and no secret
 * value in any result. Over HTTP: mcp-http.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { api, assertNoLeakedServers, CLI, tempDir, type RunningServer } from '../helpers/server.js';
import { CONFIG_SECRET, errorText, LOCAL_SUITE, OVERRIDE_SECRET, startMcpServer, stdioClient, structured, Transcript, type Outcome, type SetResult } from './mcp-fixture.js';

import { TOOLS } from './mcp-fixture.js';

describe('runset mcp (stdio)', () => {
  let server: RunningServer;
  let readKey: string;
  let agent: Client;
  const transcript = new Transcript();
  let failedSet: string;

  before(async () => {
    ({ server, readKey } = await startMcpServer());
    agent = await stdioClient(server, server.apiKey);
  });
  after(async () => {
    await agent?.close();
    transcript.assertNoSecret([OVERRIDE_SECRET, CONFIG_SECRET, server.apiKey, readKey]);
    assert.equal(await server.stop(), 0);
    assertNoLeakedServers();
  });

  test('lists its tools, each with a description and JSON Schemas for input and output', async () => {
    const { tools } = await agent.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
    for (const tool of tools) {
      assert.ok((tool.description ?? '').length > 60, `${tool.name} has a description for a model`);
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal(tool.outputSchema?.type, 'object', `${tool.name} declares its output`);
    }
    const trigger = tools.find((t) => t.name === 'trigger_set')!;
    assert.deepEqual(trigger.inputSchema.required, ['env']);
    assert.ok('suiteDir' in (trigger.inputSchema.properties ?? {}), 'runset mcp offers a local suite folder');
  });

  test('lists environments with declared variables and no secret value', async () => {
    const envs = structured<{ environments: Array<{ name: string; tests: number; variables: Array<{ name: string; secret: boolean; value: string | null }> }> }>(await transcript.call(agent, 'list_environments', {}));
    assert.deepEqual(envs.environments.map((e) => [e.name, e.tests]).sort(), [['preview', 1], ['staging', 2]]);
    assert.deepEqual(envs.environments.find((e) => e.name === 'staging')!.variables.find((v) => v.name === 'TOKEN'), { name: 'TOKEN', secret: true, value: null, accepts: null });
  });

  test('triggers a failing set with a secret override and waits for it, with progress', async () => {
    const progress: number[] = [];
    const result = await transcript.call(agent, 'trigger_set', { env: 'staging', envOverride: { TOKEN: OVERRIDE_SECRET }, labels: { branch: 'fix-login' }, timeoutSeconds: 60 }, (p) => progress.push(p.progress));
    const outcome = structured<Outcome>(result);
    assert.equal(outcome.status, 'FAIL');
    assert.equal(outcome.finished, true);
    assert.deepEqual(outcome.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 1, FAIL: 1 });
    assert.deepEqual(outcome.failed, ['breaks']);
    assert.ok(outcome.url.endsWith(`/sets/${outcome.setId}`));
    assert.ok(progress.length >= 1 && progress.at(-1) === 2, `progress notifications up to 2 members ended: ${progress.join(',')}`);
    failedSet = outcome.setId;
  });

  test("reads the failure: error, the first lines of output (masked), error context, artifact links, history", async () => {
    const result = structured<SetResult>(await transcript.call(agent, 'get_set_result', { setId: failedSet }));
    assert.equal(result.status, 'FAIL');
    assert.equal(result.failuresTotal, 1);
    const failure = result.failures[0]!;
    assert.equal(failure.name, 'breaks');
    assert.ok(failure.error, 'the error');
    assert.match(failure.output!, /token is \*+/, 'the override is masked in the output');
    assert.match(failure.output!, /more lines cut; the whole output: http/, 'the output is bounded, with a link');
    assert.match(failure.errorContext!, /button "Submit" \[disabled\]/);
    assert.equal(failure.errorContextResource, `runset://sets/${failedSet}/test-runs/${(result.failures[0] as unknown as { testRunId: string }).testRunId}/error-context`);
    const link = failure.artifacts.find((a) => a.name === 'error-context.md');
    assert.ok(link && link.url.startsWith(server.url.replace(/\/api$/, '/api/v0/artifacts/')), 'an absolute artifact link');
    assert.equal(failure.history?.failedBefore, 0, 'it never failed before');
  });

  test('attaches the set summary and the error context as resources', async () => {
    const summary = await agent.readResource({ uri: `runset://sets/${failedSet}/summary` });
    transcript.record(summary);
    const text = (summary.contents[0] as { text: string }).text;
    assert.match(text, /status: FAIL/);
    assert.match(text, /## FAIL breaks/);
    const result = structured<SetResult>(await transcript.call(agent, 'get_set_result', { setId: failedSet, errorContext: false }));
    assert.equal(result.failures[0]!.errorContext, null);
    const context = await agent.readResource({ uri: result.failures[0]!.errorContextResource! });
    transcript.record(context);
    assert.match((context.contents[0] as { text: string }).text, /# Page snapshot/);
  });

  test('reruns only the failures', async () => {
    const outcome = structured<Outcome>(await transcript.call(agent, 'rerun_failures', { setId: failedSet, timeoutSeconds: 60 }));
    assert.notEqual(outcome.setId, failedSet);
    assert.equal(outcome.status, 'FAIL');
    assert.deepEqual(outcome.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 1 });
    assert.deepEqual(outcome.failed, ['breaks']);
    const again = structured<SetResult>(await transcript.call(agent, 'get_set_result', { setId: outcome.setId }));
    assert.equal(again.failures[0]!.history?.failedBefore, 1, 'it failed before, in the first set');
  });

  test('runs one test N times and says how many passed; its history follows', async () => {
    const repeated = structured<{ passed: number; failed: number; times: number; sets: unknown[] }>(await transcript.call(agent, 'repeat_test', { env: 'staging', name: 'passes', times: 2, timeoutSeconds: 60 }));
    assert.deepEqual([repeated.times, repeated.passed, repeated.failed, repeated.sets.length], [2, 2, 0, 2]);
    const history = structured<{ known: boolean; history: { runs: number; passRate: number } }>(await transcript.call(agent, 'get_test_history', { env: 'staging', name: 'passes' }));
    assert.equal(history.known, true);
    assert.deepEqual([history.history.runs, history.history.passRate], [3, 1]);
  });

  test('a read key may read but is refused a trigger and a quarantine with the API\'s problem', async () => {
    const reader = await stdioClient(server, readKey);
    try {
      const sets = structured<{ sets: Array<{ setId: string }> }>(await transcript.call(reader, 'list_sets', { env: 'staging' }));
      assert.ok(sets.sets.some((s) => s.setId === failedSet));
      const refused = errorText(await transcript.call(reader, 'trigger_set', { env: 'staging', envOverride: { TOKEN: OVERRIDE_SECRET } }));
      assert.match(refused, /HTTP 403, code forbidden/);
      assert.match(refused, /has role read/);
      assert.match(errorText(await transcript.call(reader, 'quarantine_test', { env: 'staging', name: 'breaks', reason: 'flaky' })), /HTTP 403, code forbidden/);
    } finally {
      await reader.close();
    }
  });

  test('quarantines a test and ends its quarantine; an unknown set is the API\'s 404', async () => {
    const added = structured<{ name: string; created: boolean }>(await transcript.call(agent, 'quarantine_test', { env: 'staging', name: 'breaks', reason: 'tracked in #44' }));
    assert.deepEqual([added.name, added.created], ['breaks', true]);
    const result = structured<SetResult>(await transcript.call(agent, 'get_set_result', { setId: failedSet }));
    assert.equal((result.failures[0] as unknown as { quarantinedNow: boolean }).quarantinedNow, true);
    structured(await transcript.call(agent, 'unquarantine_test', { env: 'staging', name: 'breaks' }));
    assert.match(errorText(await transcript.call(agent, 'cancel_set', { setId: '00000000-0000-4000-8000-000000000000' })), /HTTP 404, code not_found/);
  });

  test('a wait that runs out answers with the set still running, which cancel_set ends', async () => {
    const outcome = structured<Outcome & { note: string }>(await transcript.call(agent, 'trigger_set', { env: 'preview', timeoutSeconds: 1 }));
    assert.equal(outcome.finished, false);
    assert.notEqual(outcome.status, 'FAIL');
    assert.match(outcome.note, /not finished within 1 s; .*wait_for_set/);
    const cancelled = structured<{ cancelled: boolean; status: string }>(await transcript.call(agent, 'cancel_set', { setId: outcome.setId }));
    assert.deepEqual([cancelled.cancelled, cancelled.status], [true, 'FAIL']);
  });

  test('runs a suite from a local folder (suiteDir): uploaded, then run', async () => {
    const dir = tempDir('runset-mcp-suite-');
    for (const [name, text] of Object.entries(LOCAL_SUITE)) writeFileSync(path.join(dir, name), text);
    const outcome = structured<Outcome>(await transcript.call(agent, 'trigger_set', { env: 'preview', suiteDir: dir, timeoutSeconds: 60 }));
    assert.deepEqual([outcome.status, outcome.counts.SUCCESS], ['SUCCESS', 1]);
    const runs = await api<{ testRuns: Array<{ name: string }> }>(server, 'GET', `/v0/test-run-sets/${outcome.setId}/test-runs`);
    assert.deepEqual(runs.body.testRuns.map((r) => r.name), ['from the folder']);
  });

  test('offers the two prompts', async () => {
    const { prompts } = await agent.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name).sort(), ['is_test_flaky', 'why_did_set_fail']);
    const why = await agent.getPrompt({ name: 'why_did_set_fail', arguments: { setId: failedSet } });
    assert.match((why.messages[0]!.content as { text: string }).text, new RegExp(`get_set_result with setId ${failedSet}`));
  });
});

test('runset mcp without RUNSET_URL says what to set and exits 3', async () => {
  const env = { PATH: process.env.PATH ?? '' };
  const failed = await promisify(execFile)(process.execPath, [CLI, 'mcp'], { env, timeout: 30_000 }).then(
    () => assert.fail('it should exit 3'),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  assert.equal(failed.code, 3);
  assert.equal(failed.stdout, '', 'stdout carries the protocol only');
  assert.match(failed.stderr, /RUNSET_URL is not set/);
});
