/**
 * A real Playwright failure read through /api/mcp: get_set_result carries the
 * error context Playwright wrote (the page's ARIA snapshot at the failure) and
 * links to the member's trace and screenshot, which open with the same key.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { assertNoLeakedServers, startRunset, tempDir } from '../helpers/server.js';
import { chromiumMissing, writeShopSuite } from './playwright-fixtures.js';
import { httpClient, structured, Transcript, type Outcome, type SetResult } from './mcp-fixture.js';

after(() => assertNoLeakedServers());

const SPEC = `
import { test, expect } from '@playwright/test';
test('submit is enabled', async ({ page }) => {
  await page.setContent('<h1>Sign in</h1><button disabled>Submit</button>');
  await expect(page.getByRole('button', { name: 'Submit' })).toBeEnabled({ timeout: 500 });
});
`;

test('a Playwright failure comes with its error context and links to its trace and screenshot', { skip: chromiumMissing() }, async () => {
  const dir = tempDir('runset-mcp-pw-');
  writeShopSuite(dir, SPEC);
  // Traces are the suite's choice (runset keeps what Playwright writes): this one keeps them for failures.
  writeFileSync(path.join(dir, 'suite', 'playwright.config.ts'), "export default { testDir: 'tests', use: { trace: 'retain-on-failure' }, projects: [{ name: 'chromium' }] };\n");
  const configPath = path.join(dir, 'runset.config.yaml');
  writeFileSync(configPath, 'environments:\n  staging: {}\ntests:\n  - { name: shop, type: playwright, dir: suite }\n');
  const server = await startRunset({ configPath, args: ['--workers', '1'] });
  const agent = await httpClient(server, server.apiKey);
  try {
    const transcript = new Transcript();
    const outcome = structured<Outcome>(await transcript.call(agent, 'trigger_set', { env: 'staging', timeoutSeconds: 120 }));
    assert.equal(outcome.status, 'FAIL');
    const result = structured<SetResult>(await transcript.call(agent, 'get_set_result', { setId: outcome.setId }));
    const failure = result.failures[0]!;
    assert.match(failure.name, /submit is enabled/);
    assert.match(failure.error ?? '', /toBeEnabled/);
    assert.match(failure.errorContext ?? '', /button "Submit" \[disabled\]/, 'the page snapshot at the failure');
    const names = failure.artifacts.map((a) => a.name);
    assert.ok(names.some((n) => /^trace.*\.zip$/.test(n)) && names.some((n) => /\.png$/.test(n)), `trace and screenshot linked: ${names.join(', ')}`);
    const trace = failure.artifacts.find((a) => /^trace.*\.zip$/.test(a.name)) as { url: string; viewer?: string };
    assert.equal(trace.viewer, `${server.url.replace(/\/api$/, '')}/trace-viewer/index.html?trace=${encodeURIComponent(new URL(trace.url).pathname)}`);
    for (const artifact of failure.artifacts) {
      const res = await fetch(artifact.url, { headers: { authorization: `Bearer ${server.apiKey}` } });
      assert.equal(res.status, 200, artifact.url);
      await res.arrayBuffer();
    }
  } finally {
    await agent.close();
    assert.equal(await server.stop(), 0);
  }
});
