/**
 * runset's MCP server driven by the MCP SDK's own client against a real
 * `serve`: over stdio (`runset mcp`, a client of the API) and over Streamable
 * HTTP (/api/mcp on the API). Tools and their schemas, a failing set triggered
 * and waited for with progress, its failure read with output and error
 * context, its failures rerun, a test run N times, a `read` key refused, and
 * no secret value in any result.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { assertNoLeakedServers, type RunningServer } from '../helpers/server.js';
import { CONFIG_SECRET, errorText, httpClient, OVERRIDE_SECRET, startMcpServer, stdioClient, structured, Transcript } from './mcp-fixture.js';

const TOOLS = ['cancel_set', 'get_set_result', 'get_test_history', 'list_environments', 'list_sets', 'quarantine_test', 'repeat_test', 'rerun_failures', 'trigger_set', 'unquarantine_test', 'wait_for_set'];

interface Outcome { setId: string; status: string; finished: boolean; counts: Record<string, number>; failed: string[]; url: string }
interface Failure { name: string; error: string | null; output: string | null; errorContext: string | null; errorContextResource: string | null; artifacts: Array<{ name: string; url: string }>; history: { failedBefore: number; runs: number } | null }
interface SetResult { setId: string; status: string; failuresTotal: number; failures: Failure[]; counts: Record<string, number> }

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
    assert.deepEqual(envs.environments.map((e) => [e.name, e.tests]), [['staging', 2]]);
    assert.deepEqual(envs.environments[0]!.variables.find((v) => v.name === 'TOKEN'), { name: 'TOKEN', secret: true, value: null, accepts: null });
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

  test('offers the two prompts', async () => {
    const { prompts } = await agent.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name).sort(), ['is_test_flaky', 'why_did_set_fail']);
    const why = await agent.getPrompt({ name: 'why_did_set_fail', arguments: { setId: failedSet } });
    assert.match((why.messages[0]!.content as { text: string }).text, new RegExp(`get_set_result with setId ${failedSet}`));
  });
});

describe('/api/mcp (Streamable HTTP)', () => {
  let server: RunningServer;
  let readKey: string;
  const transcript = new Transcript();

  before(async () => {
    ({ server, readKey } = await startMcpServer());
  });
  after(async () => {
    transcript.assertNoSecret([OVERRIDE_SECRET, CONFIG_SECRET, server.apiKey, readKey]);
    assert.equal(await server.stop(), 0);
    for (const secret of [OVERRIDE_SECRET, CONFIG_SECRET, server.apiKey, readKey]) assert.ok(!server.logs().includes(secret), 'no secret in the server log');
  });

  test('without a key it answers 401 as a problem; GET is 405', async () => {
    const res = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { code: string }).code, 'unauthorized');
    const get = await fetch(`${server.url}/mcp`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    assert.equal(get.status, 405);
  });

  test('lists the same tools (without a local suite folder), triggers, waits and reads the failure', async () => {
    const agent = await httpClient(server, server.apiKey);
    try {
      const { tools } = await agent.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
      assert.ok(!('suiteDir' in (tools.find((t) => t.name === 'trigger_set')!.inputSchema.properties ?? {})), 'no local folders over HTTP');
      const progress: number[] = [];
      const outcome = structured<Outcome>(await transcript.call(agent, 'trigger_set', { env: 'staging', envOverride: { TOKEN: OVERRIDE_SECRET }, timeoutSeconds: 60 }, (p) => progress.push(p.progress)));
      assert.deepEqual([outcome.status, outcome.failed], ['FAIL', ['breaks']]);
      assert.equal(progress.at(-1), 2, 'progress notifications over the SSE answer');
      assert.ok(outcome.url.startsWith(server.url.replace(/\/api$/, '')), 'links use the address the agent called');
      const result = structured<SetResult>(await transcript.call(agent, 'get_set_result', { setId: outcome.setId }));
      assert.match(result.failures[0]!.errorContext!, /# Page snapshot/);
      assert.match(result.failures[0]!.output!, /token is \*+/);
      const rerun = structured<Outcome>(await transcript.call(agent, 'rerun_failures', { setId: outcome.setId, timeoutSeconds: 60 }));
      assert.deepEqual(rerun.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 1 });
      const link = result.failures[0]!.artifacts[0]!.url;
      assert.equal((await fetch(link, { headers: { authorization: `Bearer ${server.apiKey}` } })).status, 200, 'the artifact link works with the same key');
    } finally {
      await agent.close();
    }
  });

  test('a read key is refused a trigger with the API\'s problem, and reads', async () => {
    const agent = await httpClient(server, readKey);
    try {
      assert.match(errorText(await transcript.call(agent, 'trigger_set', { env: 'staging', envOverride: { TOKEN: OVERRIDE_SECRET } })), /HTTP 403, code forbidden/);
      const sets = structured<{ sets: unknown[] }>(await transcript.call(agent, 'list_sets', {}));
      assert.equal(sets.sets.length, 2);
    } finally {
      await agent.close();
    }
  });
});
