/**
 * A framework process stuck before its first test is found and stopped (issue
 * 40 item 4): its members FAIL saying so, with its own output, instead of
 * staying WAITING, held by their worker, until the share's deadline. One that
 * loaded runset's reporter is never stopped for being slow after that (a long
 * globalSetup). Runs the executor on a stand-in for Vitest 3 (a `vitest`
 * package whose program either hangs or constructs runset's real Vitest
 * reporter, as Vitest does at its start), so no install is needed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CaseResult, FrameworkTestSpec } from '../../src/core/types.js';
import { createFrameworkExecutor } from '../../src/executors/frameworks/index.js';
import { tempDir } from '../helpers/server.js';

/** A program that says one line and then never anything again (a config waiting on stdin, a port, a hung loader). */
const HANGS = `console.log('loading the config, forever');
setInterval(() => undefined, 1000);
`;

/**
 * Constructs the reporter named by --reporter= as Vitest does (runset's own:
 * it says ready), then stays silent for `quietMs` (a long globalSetup), then
 * writes a passing report for the case.
 */
const SLOW_AFTER_READY = (quietMs: number) => `import { writeFileSync } from 'node:fs';
import path from 'node:path';
const arg = (name) => process.argv.find((a) => a.startsWith(name))?.slice(name.length);
const Reporter = (await import(process.argv.find((a) => a.startsWith('--reporter=/')).slice('--reporter='.length))).default;
new Reporter();
await new Promise((resolve) => setTimeout(resolve, ${quietMs}));
const assertion = { ancestorTitles: [], title: 't', status: 'passed', duration: 1, failureMessages: [] };
writeFileSync(arg('--outputFile='), JSON.stringify({ testResults: [{ name: path.resolve('a.test.js'), assertionResults: [assertion] }] }));
`;

/** A suite whose `vitest` (version 3.2.4, so runset follows it live) is `program`. */
function standIn(program: string): FrameworkTestSpec {
  const dir = tempDir('runset-fw-guard-');
  const pkg = path.join(dir, 'node_modules', 'vitest');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'vitest', version: '3.2.4', type: 'module', bin: { vitest: 'cli.js' } }));
  writeFileSync(path.join(pkg, 'cli.js'), program);
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'guarded', private: true, type: 'module' }));
  writeFileSync(path.join(dir, 'a.test.js'), '');
  return {
    name: 'a.test.js › t', type: 'vitest', dir, args: [], tags: [], timeoutSeconds: 30, retries: 0, timeoutOverride: false, retriesOverride: false,
    case: { entry: 'guarded', file: 'a.test.js', titles: ['t'] },
  };
}

async function runShare(spec: FrameworkTestSpec, processStartMs: number): Promise<{ results: CaseResult[]; begun: number[] }> {
  const results: CaseResult[] = [];
  const begun: number[] = [];
  const executor = createFrameworkExecutor('vitest', { processStartMs });
  await executor.runBatch!([spec], {
    variables: {}, signal: new AbortController().signal, workDir: tempDir('runset-fw-guard-work-'), parallelism: 1,
    onBegin: (i) => begun.push(i), onEnd: (i, r) => (results[i] = r),
  });
  return { results, begun };
}

// The bound is a bound, not an assertion on time: without the guard, the share runs to its deadline (a minute and the case's 30 s).
test('a framework process that never loads runset reporter is stopped, and its members fail saying why', { timeout: 45_000 }, async () => {
  const { results, begun } = await runShare(standIn(HANGS), 1000);
  assert.deepEqual(begun, [], 'it never began');
  const result = results[0];
  assert.equal(result?.passed, false);
  assert.match(result?.error ?? '', /^Vitest 3\.2\.4 said nothing for 1s after it started \(runset's reporter never loaded\): it was stuck before its first test, and was stopped/);
  assert.match(result?.error ?? '', /: loading the config, forever; `runset check` shows whether its config loads$/, 'its own words, then where to look');
  assert.match(result?.output ?? '', /loading the config, forever/, 'its own output is kept');
});

test('a framework process that loaded runset reporter is never stopped for silence after that', async () => {
  const limit = 8000; // room for Node to start on a busy machine
  const { results } = await runShare(standIn(SLOW_AFTER_READY(limit + 4000)), limit);
  assert.equal(results[0]?.passed, true, JSON.stringify(results[0]));
});
