/**
 * runset's MCP server over Streamable HTTP (POST /api/mcp on a real `serve`),
 * driven by the MCP SDK's own client: a plain 401 without a key, the same tools
 * as over stdio, a failing set triggered and waited for with progress over the
 * event stream, its failure read and rerun, a `read` key refused, no secret in
 * any result or log; and, on PostgreSQL, one agent's requests answered by two
 * API processes in turn (nothing of a session is kept between requests).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newToken } from '../../src/auth/keys.js';
import { dropSchemas, newSchemaName, NO_DATABASE, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { assertNoLeakedServers, type RunningServer } from '../helpers/server.js';
import { CONFIG_SECRET, errorText, httpClient, OVERRIDE_SECRET, startMcpServer, structured, Transcript, TOOLS, type Outcome, type SetResult } from './mcp-fixture.js';

/** Where people reach this server: behind a proxy, under a path of its own. */
const PUBLIC_URL = 'https://runset.example.test/e2e';

describe('/api/mcp (Streamable HTTP)', () => {
  let server: RunningServer;
  let readKey: string;
  const transcript = new Transcript();

  before(async () => {
    ({ server, readKey } = await startMcpServer({ args: ['--workers', '2', '--public-url', PUBLIC_URL] }));
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
      assert.equal(outcome.url, `${PUBLIC_URL}/sets/${outcome.setId}`, 'links start at --public-url');
      const result = structured<SetResult>(await transcript.call(agent, 'get_set_result', { setId: outcome.setId }));
      assert.match(result.failures[0]!.errorContext!, /# Page snapshot/);
      assert.match(result.failures[0]!.output!, /token is \*+/);
      const rerun = structured<Outcome>(await transcript.call(agent, 'rerun_failures', { setId: outcome.setId, timeoutSeconds: 60 }));
      assert.deepEqual(rerun.counts, { WAITING: 0, RUNNING: 0, SUCCESS: 0, FAIL: 1 });
      const link = result.failures[0]!.artifacts[0]!.url;
      assert.ok(link.startsWith(`${PUBLIC_URL}/api/v0/artifacts/`), link);
      const behindTheProxy = link.replace(PUBLIC_URL, server.url.replace(/\/api$/, ''));
      assert.equal((await fetch(behindTheProxy, { headers: { authorization: `Bearer ${server.apiKey}` } })).status, 200, 'the artifact link works with the same key');
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

test('a server that stops ends the waits in flight on /api/mcp instead of holding its exit for them', async () => {
  const { server } = await startMcpServer({ args: ['--workers', '1', '--grace', '1s'] });
  const agent = await httpClient(server, server.apiKey);
  const waiting = agent.callTool({ name: 'trigger_set', arguments: { env: 'preview', timeoutSeconds: 300 } }, undefined, { timeout: 300_000 }).then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  await new Promise((resolve) => setTimeout(resolve, 1500)); // the set runs and the tool waits for it
  const asked = Date.now();
  assert.equal(await server.stop(), 0);
  assert.ok(Date.now() - asked < 15_000, `stopped in ${Date.now() - asked} ms`);
  const ended = await waiting;
  assert.ok('error' in ended || ended.result.isError === true, 'the agent learns its wait ended');
  await agent.close();
});

describe('/api/mcp is stateless: two API processes on one PostgreSQL answer one agent in turn', { skip: TEST_DATABASE_URL ? undefined : NO_DATABASE }, () => {
  const schema = newSchemaName('runset_mcp');
  const shared = { apiKey: newToken(), env: { RUNSET_SECRET_KEY: 'one secret key for every process' } };
  const store = ['--database-url', TEST_DATABASE_URL ?? '', '--database-schema', schema];
  let first: RunningServer;
  let second: RunningServer;

  before(async () => {
    ({ server: first } = await startMcpServer({ ...shared, args: [...store, '--workers', '2'] }));
    ({ server: second } = await startMcpServer({ ...shared, args: [...store, '--no-workers'] }));
  });
  after(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
    await dropSchemas(TEST_DATABASE_URL!, [schema]);
  });

  test('every request goes to the other process, and the agent sees one server', async () => {
    const hosts = [new URL(first.url).host, new URL(second.url).host];
    const served: string[] = [];
    // Each POST of the agent goes to the process the last one did not: nothing may rest on a session.
    const alternate = (url: string | URL, init?: RequestInit) => {
      const target = new URL(String(url));
      target.host = hosts[served.length % 2]!;
      served.push(target.host);
      return fetch(target, init);
    };
    const agent = await httpClient(first, first.apiKey, alternate);
    const transcript = new Transcript();
    try {
      assert.equal((await agent.listTools()).tools.length, TOOLS.length);
      const outcome = structured<Outcome>(await transcript.call(agent, 'trigger_set', { env: 'staging', envOverride: { TOKEN: OVERRIDE_SECRET }, timeoutSeconds: 60 }));
      assert.deepEqual([outcome.status, outcome.failed], ['FAIL', ['breaks']]);
      const result = structured<SetResult>(await transcript.call(agent, 'get_set_result', { setId: outcome.setId }));
      assert.match(result.failures[0]!.errorContext!, /# Page snapshot/);
      assert.match(result.failures[0]!.output!, /token is \*+/);
      assert.ok(new Set(served).size === 2 && served.length >= 5, `both processes answered: ${served.join(' ')}`);
      transcript.assertNoSecret([OVERRIDE_SECRET, CONFIG_SECRET, first.apiKey]);
    } finally {
      await agent.close();
    }
  });
});

after(() => assertNoLeakedServers());
