/**
 * The version matrix's Mocha suite (./framework-fixtures.ts has the others'):
 * the same five cases, in CommonJS, the retry set by the test itself
 * (`this.retries(1)`), so only that case is retried; its .mocharc.json names
 * the file, as real suites' do. Run directly with Mocha's
 * own `json` reporter as the reference; its `fullTitle` is the describe titles
 * and the test's joined by spaces, so the one describe is what precedes the
 * test's own title.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DirectCase } from './framework-fixtures.js';

const MOCHA = `const assert = require('node:assert');
let tries = 0;
describe('group', function () {
  it('passes', function () {
    console.log('hello from passes');
    assert.equal(1 + 1, 2);
  });
  it('fails', function () {
    assert.equal(1 + 1, 3, 'arithmetic still works');
  });
  // The skip is the subject under test: runset must report a case that never runs as skipped.
  it.skip('skipped on purpose', function () {});
  it('passes on retry', function () {
    this.retries(1);
    tries += 1;
    assert.equal(tries, 2, 'the first attempt fails');
  });
});
it('top level', function () {});
`;

/** Writes the suite's test file (and its package.json), named after `tag`; the file's name. */
export function writeMochaSuite(dir: string, tag: string): string {
  const file = `${tag}.test.js`;
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: tag, private: true }));
  writeFileSync(path.join(dir, '.mocharc.json'), JSON.stringify({ spec: [file] }));
  writeFileSync(path.join(dir, file), MOCHA);
  return file;
}

interface MochaJsonTest {
  title: string;
  fullTitle: string;
  file: string;
  err: { message?: string };
}

/** Runs the suite with Mocha's `json` reporter written to a file; its cases by `file › describe › title`. */
export async function runMochaDirectly(dir: string, cli: string): Promise<Map<string, DirectCase>> {
  const report = path.join(dir, 'direct-report.json');
  const args = ['--reporter', 'json', '--reporter-option', `output=${report}`];
  await new Promise<void>((resolve) => execFile(process.execPath, [cli, ...args], { cwd: dir }, () => resolve()));
  const json = JSON.parse(readFileSync(report, 'utf8')) as { tests: MochaJsonTest[]; pending: MochaJsonTest[]; failures: MochaJsonTest[] };
  const out = new Map<string, DirectCase>();
  for (const t of json.tests) {
    const describe = t.fullTitle.slice(0, Math.max(0, t.fullTitle.length - t.title.length - 1));
    const name = [path.relative(dir, t.file), ...(describe ? [describe] : []), t.title].join(' › ');
    const failed = json.failures.some((f) => f.fullTitle === t.fullTitle);
    const status = failed ? 'failed' : json.pending.some((p) => p.fullTitle === t.fullTitle) ? 'skipped' : 'passed';
    out.set(name, { name, status, firstLine: failed ? (t.err.message ?? '').split('\n')[0]!.trim() : null });
  }
  return out;
}
