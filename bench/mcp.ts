/**
 * bench:mcp — what the MCP endpoint adds to the API. One `runset serve` with a
 * failed set (a command that leaves an error-context.md); then, alternating
 * round by round, the same reads two ways over real HTTP:
 *
 * - baseline: the REST requests get_set_result makes, one after another where
 *   it waits for one, with the SDK (RunsetClient), as any client would;
 * - mcp: one `get_set_result` call through POST /api/mcp with the MCP SDK's own
 *   client (a new server and transport per request on the API side, and the
 *   tool's requests answered in process by inject).
 *
 * Prints median and p95 of each and the ratio of the medians. Budget: the tool
 * call within 2 × the REST requests it stands for (it saves the agent the
 * round trips, and must not cost more than the reads themselves).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { RunsetClient } from '../src/client/client.js';
import { newToken } from '../src/auth/keys.js';
import { startServe } from './runset-serve.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const CALLS = Number(process.env.BENCH_CALLS ?? 50);
const BUDGET = 2;

const CONFIG = `
environments:
  bench: {}
tests:
  - { name: passes, type: command, run: [node, -e, "0"] }
  - { name: breaks, type: command, run: [node, breaks.cjs], artifacts: ["error-context.md"] }
`;
const BREAKS = `require('node:fs').writeFileSync('error-context.md', '# Page snapshot\\n- button "Submit" [disabled]\\n');
for (let i = 0; i < 200; i++) console.log('log line ' + i);
process.exit(1);
`;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function timed(calls: number, one: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await one();
    times.push(performance.now() - started);
  }
  return times;
}

/** What get_set_result asks of the API, as a plain client would ask it. */
async function restReads(client: RunsetClient, setId: string): Promise<void> {
  const [, env, runs] = await Promise.all([client.getTestRunSet(setId), client.getTestRunSetEnv(setId), client.listTestRuns(setId)]);
  const failed = (runs ?? []).filter((r) => r.status === 'FAIL');
  await client.listQuarantine(env!);
  await Promise.all(failed.map(async (run) => {
    const context = (run.artifacts as Array<{ name: string; url: string }>).find((a) => a.name === 'error-context.md')!;
    await Promise.all([client.listTests(env!, run.name), client.readArtifactText(context.url)]);
  }));
}

const dir = mkdtempSync(path.join(tmpdir(), 'runset-bench-mcp-'));
writeFileSync(path.join(dir, 'runset.config.yaml'), CONFIG);
writeFileSync(path.join(dir, 'breaks.cjs'), BREAKS);
const key = newToken();
const { proc, url } = await startServe(path.join(dir, 'runset.config.yaml'), path.join(dir, 'data'), key, 2);
try {
  const client = new RunsetClient({ url, apiKey: key });
  const { testRunSetId } = await client.createTestRunSet({ env: 'bench' }, { idempotencyKey: randomUUID() });
  const final = await client.waitForTestRunSet(testRunSetId, { timeout: '60s' });
  if (final.status !== 'FAIL') throw new Error(`expected a failed set, got ${final.status}`);
  const agent = new Client({ name: 'bench', version: '1' });
  await agent.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  const callTool = () => agent.callTool({ name: 'get_set_result', arguments: { setId: testRunSetId } });
  await timed(10, () => restReads(client, testRunSetId));
  await timed(10, callTool);
  const rest: number[] = [];
  const mcp: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const pair = round % 2 === 0
      ? [await timed(CALLS, () => restReads(client, testRunSetId)), await timed(CALLS, callTool)]
      : [await timed(CALLS, callTool), await timed(CALLS, () => restReads(client, testRunSetId))].reverse();
    const [r, m] = pair as [number[], number[]];
    rest.push(...r);
    mcp.push(...m);
    const median = (xs: number[]) => quantile([...xs].sort((a, b) => a - b), 0.5);
    ratios.push(median(m) / median(r));
    console.log(`round ${round + 1}: REST median ${median(r).toFixed(1)} ms, MCP median ${median(m).toFixed(1)} ms, ratio ${(median(m) / median(r)).toFixed(2)}`);
  }
  await agent.close();
  rest.sort((a, b) => a - b);
  mcp.sort((a, b) => a - b);
  const ratio = quantile([...ratios].sort((a, b) => a - b), 0.5);
  console.log(`REST reads (baseline): median ${quantile(rest, 0.5).toFixed(1)} ms, p95 ${quantile(rest, 0.95).toFixed(1)} ms`);
  console.log(`MCP get_set_result:    median ${quantile(mcp, 0.5).toFixed(1)} ms, p95 ${quantile(mcp, 0.95).toFixed(1)} ms`);
  console.log(`median of the rounds' ratios: ${ratio.toFixed(2)} (budget ≤ ${BUDGET}) ${ratio <= BUDGET ? 'OK' : 'OVER BUDGET'}`);
  process.exitCode = ratio <= BUDGET ? 0 : 1;
} finally {
  proc.kill('SIGTERM');
}
