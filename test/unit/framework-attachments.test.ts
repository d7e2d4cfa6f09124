/**
 * Framework suites' files as artifacts, without a framework: which member a
 * written file goes to, how attachments become files, the `artifacts:`
 * config, the readers' attachments (Cucumber's envelopes), and the rule of
 * which files may be read at all (src/artifacts/take.ts).
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FrameworkTestSpec } from '../../src/core/types.js';
import { parseSuiteConfig } from '../../src/config/suite.js';
import { attachmentFiles, attribute } from '../../src/executors/frameworks/attachments.js';
import { ArtifactNames, MAX_FILES } from '../../src/executors/artifact-files.js';
import { cucumberAdapter } from '../../src/executors/frameworks/cucumber.js';
import { takeFile } from '../../src/artifacts/take.js';
import { ShareArtifacts } from '../../src/executors/frameworks/share-artifacts.js';
import type { CaseResult } from '../../src/core/types.js';

const folder = (t: { after(fn: () => void): void }) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-attachments-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

test('a written file goes to the member its path names (whole words, the longest name winning); the rest to the failed members, or the first', () => {
  const members = [
    { titles: ['checkout', 'pays by card'], failed: false },
    { titles: ['checkout', 'pays'], failed: true },
    { titles: ['refunds'], failed: true },
  ];
  const at = (file: string) => `/suite/${file}`;
  const given = attribute([at('shots/checkout-pays-by-card.png'), at('shots/Checkout Pays.png'), at('shots/discard.png'), at('refunds/log.txt')], '/suite', members);
  assert.deepEqual(given.get(0), [at('shots/checkout-pays-by-card.png')], 'the longest name wins over "checkout pays"');
  assert.deepEqual(given.get(1), [at('shots/Checkout Pays.png'), at('shots/discard.png')], 'folded case and spaces; "card" is not a word of "discard"');
  assert.deepEqual(given.get(2), [at('shots/discard.png'), at('refunds/log.txt')], 'a folder name counts; an unnamed file goes to each failure');
  const passing = attribute([at('x.txt')], '/suite', [{ titles: ['a'], failed: false }, { titles: ['b'], failed: false }]);
  assert.deepEqual([...passing.entries()], [[0, [at('x.txt')]]], 'with no failure, the first member keeps it: never dropped');
});

test('attachments become files: a path resolved from the suite, bytes written into the member\'s folder, names unique', (t) => {
  const dir = folder(t);
  const names = new ArtifactNames();
  const files = attachmentFiles(
    [
      { name: 'page', contentType: 'text/html', path: 'out/report.html' },
      { name: 'shot', contentType: 'image/png', body: Buffer.from('png bytes').toString('base64') },
      { name: 'shot', contentType: 'image/png', body: Buffer.from('second').toString('base64') },
      { name: 'a b/c?.txt', contentType: 'text/plain', body: '' },
    ],
    '/suite',
    path.join(dir, 'attachments', '3'),
    names,
  );
  assert.deepEqual(files.map((f) => f.name), ['page.html', 'shot.png', 'shot-2.png', 'a-b-c-.txt']);
  assert.equal(files[0]?.path, '/suite/out/report.html');
  assert.equal(readFileSync(files[1]!.path, 'utf8'), 'png bytes');
  assert.equal(readFileSync(files[2]!.path, 'utf8'), 'second');
  assert.ok(files[1]!.path.startsWith(path.join(dir, 'attachments', '3')));
});

test('artifacts: globs keep only what the share wrote, at most MAX_FILES a member, saying what was left', async (t) => {
  const dir = folder(t);
  mkdirSync(path.join(dir, 'logs'));
  writeFileSync(path.join(dir, 'logs', 'old.txt'), 'from an earlier run');
  const old = new Date(Date.now() - 60_000);
  const { utimesSync } = await import('node:fs');
  utimesSync(path.join(dir, 'logs', 'old.txt'), old, old);
  const spec = (titles: string[]): FrameworkTestSpec => ({ name: 'j', type: 'jest', dir, args: [], tags: [], timeoutSeconds: 30, retries: 0, timeoutOverride: false, retriesOverride: false, artifacts: ['logs/*.txt'], case: { entry: 'j', file: 'a.test.js', titles } });
  const share = new ShareArtifacts([spec(['passes']), spec(['fails'])], path.join(dir, 'work'));
  for (let i = 0; i < MAX_FILES + 3; i++) writeFileSync(path.join(dir, 'logs', `line-${String(i).padStart(3, '0')}.txt`), String(i));
  const result = (passed: boolean): CaseResult => ({ passed, error: passed ? null : 'boom', output: '', attempts: 1, durationMs: 1, artifacts: [] });
  const ended = new Map([[0, result(true)], [1, result(false)]]);
  await share.addWritten(ended);
  assert.deepEqual(ended.get(0)?.artifacts, [], 'the files name no test: they go to the failure');
  const failed = ended.get(1)!;
  assert.equal(failed.artifacts.length, MAX_FILES);
  assert.ok(!failed.artifacts.some((a) => a.name === 'old.txt'), 'a file older than the share is not its');
  assert.match(failed.output, /runset: artifacts: 3 more file\(s\) past 100 for this test not kept: logs\/line-100\.txt, logs\/line-101\.txt, logs\/line-102\.txt/);
});

test('artifacts: takes globs inside the suite\'s folder; one that leaves it is refused, saying what is accepted', (t) => {
  const dir = folder(t);
  mkdirSync(path.join(dir, 'suite'));
  const config = (globs: string) => `environments:\n  e2e: {}\ntests:\n  - { name: j, type: jest, dir: suite, artifacts: ${globs} }\n`;
  const [spec] = parseSuiteConfig(config('["shots/**/*.png", "logs/*.txt"]'), path.join(dir, 'runset.config.yaml')).tests as FrameworkTestSpec[];
  assert.deepEqual(spec?.artifacts, ['shots/**/*.png', 'logs/*.txt']);
  assert.throws(() => parseSuiteConfig(config('["../secrets/*"]'), path.join(dir, 'runset.config.yaml')), /tests\[0\]\.artifacts\[0\].*"\.\.\/secrets\/\*" leaves the suite's folder \(dir\).*without "\.\."/s);
  assert.throws(() => parseSuiteConfig(config('[]'), path.join(dir, 'runset.config.yaml')), /artifacts/);
});

test('Cucumber: attachments of every attempt are files (base64 or text), logs and links are output', () => {
  const envelopes = [
    { gherkinDocument: { uri: 'f.feature', feature: { name: 'Shop', children: [{ scenario: { id: 's1', name: 'pays', location: { line: 3 }, steps: [] } }] } } },
    { pickle: { id: 'p1', uri: 'f.feature', name: 'pays', astNodeIds: ['s1'], steps: [], tags: [] } },
    { testCase: { id: 't1', pickleId: 'p1', testSteps: [{ id: 'st1' }] } },
    { testCaseStarted: { id: 'a1', testCaseId: 't1', attempt: 0, timestamp: { seconds: 1, nanos: 0 } } },
    { attachment: { testCaseStartedId: 'a1', testStepId: 'st1', body: Buffer.from('png').toString('base64'), contentEncoding: 'BASE64', mediaType: 'image/png', fileName: 'card.png' } },
    { attachment: { testCaseStartedId: 'a1', testStepId: 'st1', body: 'took it', contentEncoding: 'IDENTITY', mediaType: 'text/x.cucumber.log+plain' } },
    { attachment: { testCaseStartedId: 'a1', testStepId: 'st1', body: '{"a":1}', contentEncoding: 'IDENTITY', mediaType: 'application/json' } },
    { testStepFinished: { testCaseStartedId: 'a1', testStepId: 'st1', testStepResult: { status: 'PASSED' } } },
    { testCaseFinished: { testCaseStartedId: 'a1', timestamp: { seconds: 2, nanos: 0 } } },
  ];
  const [c] = cucumberAdapter.read(envelopes.map((e) => JSON.stringify(e)).join('\n'), '/suite').cases;
  assert.equal(c?.status, 'passed');
  assert.equal(c?.output, 'took it');
  assert.deepEqual(c?.attachments, [
    { name: 'card.png', contentType: 'image/png', body: Buffer.from('png').toString('base64') },
    { name: 'attachment', contentType: 'application/json', body: Buffer.from('{"a":1}').toString('base64') },
  ]);
});

test('a file is taken only as the test could read it: no symbolic link, no FIFO, and under --run-as only what that user may read and reach', async (t) => {
  const dir = folder(t);
  const file = path.join(dir, 'shot.png');
  writeFileSync(file, 'bytes');
  const taken = await takeFile(file);
  assert.equal(typeof taken, 'object');
  if (typeof taken === 'object') {
    assert.equal(readFileSync(taken.path, 'utf8'), 'bytes', 'read through the opened handle');
    await taken.close();
  }
  symlinkSync(file, path.join(dir, 'link.png'));
  assert.equal(await takeFile(path.join(dir, 'link.png')), 'it is a symbolic link');
  execFileSync('mkfifo', [path.join(dir, 'pipe')]);
  assert.equal(await takeFile(path.join(dir, 'pipe')), 'it is not a regular file');
  assert.equal(await takeFile(path.join(dir, 'missing.png')), 'the file was not written');
  // Another user (not this process's, in no group of the file): only the "others" bits count.
  const stranger = { uid: 64_000, gid: 64_000, groups: [] };
  chmodSync(dir, 0o755);
  chmodSync(file, 0o600);
  assert.equal(await takeFile(file, stranger), 'the user tests run as cannot read it');
  chmodSync(file, 0o644);
  const readable = await takeFile(file, stranger);
  assert.equal(typeof readable, 'object');
  if (typeof readable === 'object') await readable.close();
  chmodSync(dir, 0o700);
  const unreachable = await takeFile(file, stranger);
  assert.equal(typeof unreachable, 'string');
  assert.match(unreachable as string, /^the user tests run as cannot reach it \(/);
  chmodSync(dir, 0o755);
});
