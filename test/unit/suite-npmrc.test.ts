/**
 * What an upload carries beyond its files as they are: its `.npmrc` settings
 * without their credentials (src/suites/npmrc.ts, applied by the packer and by
 * the worker's install), and, at push, the left-out folders its configs or
 * webServer name, with the line that brings each back (src/suites/left-out.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { installKey } from '../../src/suites/deps.js';
import { projectNpmSettings } from '../../src/suites/npmrc.js';
import { packSuite } from '../../src/suites/pack.js';

function suiteFolder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-npmrc-'));
  for (const [name, content] of Object.entries({ 'runset.config.yaml': 'tests: []\n', ...files })) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

const NPMRC = [
  'legacy-peer-deps=true',
  '# a comment stays',
  'registry=https://registry.example.com/',
  '//registry.example.com/:_authToken=tok-AAAA1111',
  '@corp:registry=https://npm.corp.example/',
  '//npm.corp.example/:_auth = dXNlcjpwYXNz',
  '_authToken=tok-BBBB2222',
  '@corp:_password=cGFzcw==',
  'strict-ssl = false',
  'proxy=http://user:pw-CCCC3333@proxy.example:8080/',
  '',
].join('\n');

test('an .npmrc keeps its settings and loses every credential line, named by key and line, never by value', () => {
  const { text, dropped } = projectNpmSettings(NPMRC);
  assert.equal(text, ['legacy-peer-deps=true', '# a comment stays', 'registry=https://registry.example.com/', '@corp:registry=https://npm.corp.example/', 'strict-ssl = false', ''].join('\n'));
  assert.deepEqual(dropped, ['line 4 (//registry.example.com/:_authToken)', 'line 6 (//npm.corp.example/:_auth)', 'line 7 (_authToken)', 'line 8 (@corp:_password)', 'line 10 (proxy)']);
  assert.doesNotMatch(dropped.join(' '), /tok-|pw-|dXNl|cGFz/);
});

test('packed, the .npmrc goes without its credentials and a note says which lines stayed behind', async () => {
  const packed = await packSuite(suiteFolder({ '.npmrc': NPMRC }));
  const tar = gunzipSync(packed.archive).toString('latin1');
  assert.match(tar, /legacy-peer-deps=true/);
  assert.doesNotMatch(tar, /tok-AAAA1111|tok-BBBB2222|pw-CCCC3333|dXNlcjpwYXNz/, 'no credential is in the archive');
  assert.equal(packed.notes.length, 1);
  assert.match(packed.notes[0] ?? '', /^\.npmrc: line 4 \(\/\/registry\.example\.com\/:_authToken\), .*left out of the upload/);
  assert.doesNotMatch(packed.notes.join(''), /tok-|pw-/);
  const clean = await packSuite(suiteFolder({ '.npmrc': 'legacy-peer-deps=true\n' }));
  assert.deepEqual(clean.notes, [], 'nothing to say of an .npmrc without credentials');
});

test('a worker installs once per lockfile and npm settings: other settings are another install', () => {
  const lock = Buffer.from('{"lockfileVersion":3}');
  assert.equal(installKey(lock, ''), installKey(Buffer.from(lock), ''));
  assert.notEqual(installKey(lock, 'legacy-peer-deps=true\n'), installKey(lock, ''));
});

test('at push, a build folder the script a webServer command runs reads is reported too', async () => {
  const dir = suiteFolder({
    '.gitignore': 'dist/\n', 'dist/index.html': 'x',
    'e2e/server.js': "require('http').createServer((q, s) => s.end(require('fs').readFileSync(require('path').join(__dirname, '..', 'dist', 'index.html')))).listen(3000);\n",
  });
  const listing = { version: 1 as const, reports: [{ entry: 0, report: { config: { webServer: { command: 'cross-env PORT=3000 node ./server.js' } } } }] };
  assert.deepEqual((await packSuite(dir, { listing })).notes, [
    'dist/ (1 file, 0.0 kB) is left out by .gitignore line 1 ("dist/") but e2e/server.js (run by the webServer command) names it; to upload it, add the line "!/dist/" to .runsetignore',
  ]);
});

test('at push, a left-out folder the webServer or a config names is reported with the line that brings it back', async () => {
  const dir = suiteFolder({
    '.gitignore': 'dist/\ncoverage/\ntest-results/\n',
    'dist/index.html': 'x', 'coverage/lcov.info': 'x', 'test-results/x': 'x',
    'playwright.config.js': "module.exports = { outputDir: 'test-results', webServer: { command: 'node server.js' } };\n",
    'e2e/.gitignore': 'out/\n', 'e2e/out/a': 'x', 'e2e/package.json': '{"scripts":{"serve":"http-server ./out -p 4000"},"dependencies":{"coverage":"1"}}',
  });
  const listing = { version: 1 as const, reports: [{ entry: 0, report: { config: { webServer: { command: 'cross-env PORT=4000 serve dist' } } } }] };
  const packed = await packSuite(dir, { listing });
  assert.deepEqual(packed.notes, [
    'dist/ (1 file, 0.0 kB) is left out by .gitignore line 1 ("dist/") but the webServer command names it; to upload it, add the line "!/dist/" to .runsetignore',
    'e2e/out/ (1 file, 0.0 kB) is left out by e2e/.gitignore line 1 ("out/") but e2e/package.json names it; to upload it, add the line "!/out/" to e2e/.runsetignore',
  ], 'coverage/ is named by no config (a dependency is not a folder), test-results/ is what runs write');
  writeFileSync(path.join(dir, '.runsetignore'), '!/dist/\n');
  writeFileSync(path.join(dir, 'e2e', '.runsetignore'), '!/out/\n');
  const again = await packSuite(dir, { listing });
  assert.deepEqual(again.notes, [], 'brought back, nothing left to say');
  assert.match(gunzipSync(again.archive).toString('latin1'), /dist\/index\.html[\s\S]*e2e\/out\/a/);
});
