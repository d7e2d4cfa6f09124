/**
 * Framework failures explain themselves: a framework that is not installed, a
 * listing that fails, a run whose framework cannot start and a case missing
 * from the report each give the affected entry or members the framework's own
 * first lines (or runset's exact reason), never a generic sentence. Runs the
 * listing and the executor directly on a real Vitest installed from npm
 * (cached, see ../helpers/framework-versions.ts).
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CaseResult, FrameworkTestSpec } from '../../src/core/types.js';
import { createFrameworkExecutor } from '../../src/executors/frameworks/index.js';
import { listFrameworkEntry } from '../../src/executors/frameworks/listing.js';
import { frameworkCases } from '../../src/config/framework-discovery.js';
import { tempDir } from '../helpers/server.js';
import { frameworkModules, RegistryUnreachable } from '../helpers/framework-versions.js';

let modules: string | undefined;
let unreachable: string | undefined;

before(async () => {
  try {
    modules = await frameworkModules('vitest', '4.1.12');
  } catch (error) {
    if (!(error instanceof RegistryUnreachable)) throw error;
    unreachable = error.message;
  }
});

function suite(files: Record<string, string>, linked = true): FrameworkTestSpec {
  const dir = tempDir('runset-fw-fail-');
  mkdirSync(dir, { recursive: true });
  if (linked) symlinkSync(modules!, path.join(dir, 'node_modules'), 'dir');
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'broken', private: true, type: 'module' }));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return { name: 'suite', type: 'vitest', dir, args: [], tags: [], timeoutSeconds: 30, retries: 0, timeoutOverride: false, retriesOverride: false };
}

async function runShare(specs: FrameworkTestSpec[]): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const workDir = tempDir('runset-fw-work-');
  await createFrameworkExecutor('vitest').runBatch!(specs, { variables: {}, signal: new AbortController().signal, workDir, parallelism: 1, onBegin: () => undefined, onEnd: (i, r) => (results[i] = r) });
  return results;
}

const PASSING = "import { test } from 'vitest';\ntest('one', () => {});\ntest('two', () => {});\n";

test('a framework that is not installed: the listing says which and how to install it', async (t) => {
  if (unreachable) return t.skip(unreachable);
  await assert.rejects(listFrameworkEntry(suite({ 'a.test.js': PASSING }, false)), /Vitest is not installed for .*npm install --save-dev vitest/);
});

test('a listing that fails carries the framework\'s own first lines, naming the file', async (t) => {
  if (unreachable) return t.skip(unreachable);
  await assert.rejects(listFrameworkEntry(suite({ 'a.test.js': PASSING, 'b.test.js': "import { test } from 'vitest';\nthrow new Error('b breaks on purpose at import');\n" })), /b\.test\.js: .*b breaks on purpose at import/);
});

test('a framework that cannot start fails every member of the share with its own words', async (t) => {
  if (unreachable) return t.skip(unreachable);
  const entry = suite({ 'a.test.js': PASSING });
  const cases = frameworkCases('runset.config.yaml', entry, 0, await listFrameworkEntry(entry));
  writeFileSync(path.join(entry.dir, 'vitest.config.js'), "throw new Error('the config breaks on purpose');\n");
  const results = await runShare(cases);
  assert.equal(results.length, 2);
  for (const r of results) {
    assert.equal(r.passed, false);
    assert.match(r.error ?? '', /^Vitest 4\.1\.12 exited with code 1 without writing its report: .*the config breaks on purpose/s, r.error ?? '');
  }
});

test('a case missing from the report fails alone, saying so; the others keep their outcomes', async (t) => {
  if (unreachable) return t.skip(unreachable);
  const entry = suite({ 'a.test.js': PASSING });
  const cases = frameworkCases('runset.config.yaml', entry, 0, await listFrameworkEntry(entry));
  writeFileSync(path.join(entry.dir, 'a.test.js'), "import { test } from 'vitest';\ntest('one', () => {});\ntest('two renamed', () => {});\n");
  const results = await runShare(cases);
  assert.equal(results[0]?.passed, true);
  assert.equal(results[1]?.passed, false);
  assert.match(results[1]?.error ?? '', /^the Vitest report has no result for this test/);
});
