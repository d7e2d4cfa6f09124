/**
 * A worker over HTTP reads the suite from its own checkout (`--suite-root`):
 * the spec's paths under the API's config folder move under it, others stay.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { relocateSpec } from '../../src/worker-link/suite-root.js';
import type { CommandTestSpec, HttpTestSpec, PlaywrightTestSpec } from '../../src/core/types.js';

const playwright = {
  name: 'e2e', type: 'playwright', dir: '/srv/runset/e2e', config: '/srv/runset/e2e/playwright.config.ts', timeoutMs: 1000, retries: 0,
  timeoutOverride: false, retriesOverride: false,
} as unknown as PlaywrightTestSpec;

test("a Playwright entry's folder and config move under the worker's root", () => {
  const moved = relocateSpec(playwright, '/srv/runset', '/home/runner/work/app/app') as PlaywrightTestSpec;
  assert.equal(moved.dir, '/home/runner/work/app/app/e2e');
  assert.equal(moved.config, '/home/runner/work/app/app/e2e/playwright.config.ts');
  assert.equal(playwright.dir, '/srv/runset/e2e', 'the claimed spec itself is left as it was');
});

test("a command's cwd moves; one outside the API's folder stays where the config put it", () => {
  const inside = { name: 'c', type: 'command', run: ['true'], cwd: '/srv/runset', timeoutMs: 1000, retries: 0 } as unknown as CommandTestSpec;
  assert.equal((relocateSpec(inside, '/srv/runset', '/ci/checkout') as CommandTestSpec).cwd, '/ci/checkout');
  const outside = { ...inside, cwd: '/opt/tools' };
  assert.equal((relocateSpec(outside, '/srv/runset', '/ci/checkout') as CommandTestSpec).cwd, '/opt/tools');
  const sibling = { ...inside, cwd: '/srv/runset-other' };
  assert.equal((relocateSpec(sibling, '/srv/runset', '/ci/checkout') as CommandTestSpec).cwd, '/srv/runset-other', 'a prefix is not a parent');
});

test('an http check has no files; the same root changes nothing', () => {
  const http = { name: 'h', type: 'http', url: 'https://example.com', timeoutMs: 1000, retries: 0 } as unknown as HttpTestSpec;
  assert.equal(relocateSpec(http, '/srv/runset', '/ci'), http);
  assert.equal(relocateSpec(playwright, '/srv/runset', '/srv/runset/'), playwright);
});
