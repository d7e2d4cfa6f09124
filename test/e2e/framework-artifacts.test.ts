/**
 * Files framework suites leave for their tests become those members'
 * artifacts, through a real `serve`, one set, each suite run by its own
 * framework:
 * - Cucumber 12: `this.attach` of an image (bytes) and `this.log` (a line of
 *   the member's output);
 * - Vitest 3.2 and 4: `context.annotate` with a file's path and with bytes;
 * - pytest (Debian's): a `[[ATTACHMENT|path]]` line the test prints, and one
 *   naming a symbolic link, refused with the reason in the output;
 * - Jest 30: `artifacts:` globs, each file given to the test its name names,
 *   a file naming no test to the failed one, a symbolic link not matched.
 * Each artifact is downloaded and compared with what the test wrote.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { api, assertNoLeakedServers, startRunset, tempDir, waitForSet, type RunningServer } from '../helpers/server.js';
import { installAll } from '../helpers/framework-versions.js';
import { PYTHON, pytestVersion } from './framework-fixtures-pytest.js';

interface Member {
  name: string;
  status: string;
  output: string | null;
  artifacts: Array<{ name: string; contentType: string; size: number; url: string }>;
}

/** A tiny PNG's bytes (a 1×1 image), as tests attach screenshots. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const CUCUMBER_FEATURE = `Feature: shop

  Scenario: pays by card
    Given a screenshot is attached
`;

const CUCUMBER_STEPS = `const { Given } = require('@cucumber/cucumber');
Given('a screenshot is attached', function () {
  this.log('took the screenshot');
  this.attach(Buffer.from('${PNG}', 'base64'), { mediaType: 'image/png', fileName: 'card.png' });
});
`;

const VITEST = `import { test } from 'vitest';
import { writeFileSync } from 'node:fs';
test('annotates', async ({ annotate }) => {
  writeFileSync('report.html', '<p>the page</p>');
  await annotate('page', { path: 'report.html', contentType: 'text/html' });
  await annotate('note', { body: 'plain words', bodyEncoding: 'utf-8', contentType: 'text/plain' });
});
`;

const PYTEST = `import base64


def test_screenshot(tmp_path):
    shot = tmp_path / "shot.png"
    shot.write_bytes(base64.b64decode("${PNG}"))
    print(f"[[ATTACHMENT|{shot}]]")


def test_planted_link(tmp_path):
    link = tmp_path / "hostname.txt"
    link.symlink_to("/etc/hostname")
    print(f"[[ATTACHMENT|{link}]]")
`;

/** Jest: each test leaves a file named after itself; the failing one also one that names no test, and a link to a file it did not write. */
const JEST = `const { mkdirSync, writeFileSync, symlinkSync } = require('node:fs');
mkdirSync('screenshots', { recursive: true });
describe('checkout', () => {
  test('pays by card', () => {
    writeFileSync('screenshots/checkout-pays-by-card.png', Buffer.from('${PNG}', 'base64'));
  });
  test('refunds', () => {
    writeFileSync('screenshots/checkout refunds.txt', 'refund log');
    writeFileSync('screenshots/unnamed.txt', 'whose is this');
    symlinkSync('/etc/hostname', 'screenshots/refunds-link.txt');
    throw new Error('refund failed');
  });
});
`;

after(() => assertNoLeakedServers());

describe('framework suites keep the files their tests leave', () => {
  let server: RunningServer | undefined;
  let unreachable: string | undefined;
  let members: Member[] = [];

  before(async () => {
    const installed = await installAll([
      ['@cucumber/cucumber', '12.9.0'],
      ['vitest', '3.2.4'],
      ['vitest', '4.1.12'],
      ['jest', '30.5.2'],
    ] as const);
    if (!Array.isArray(installed)) {
      unreachable = installed.unreachable;
      return;
    }
    const root = tempDir('runset-framework-artifacts-');
    const suite = (name: string, modules: string | undefined, files: Record<string, string>) => {
      const dir = path.join(root, name);
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), text);
      }
      if (modules) symlinkSync(modules, path.join(dir, 'node_modules'), 'dir');
    };
    const [cucumber, vitest3, vitest4, jest] = installed;
    suite('cucumber', cucumber, { 'package.json': '{"private":true}', 'features/shop.feature': CUCUMBER_FEATURE, 'features/support/steps.js': CUCUMBER_STEPS });
    suite('vitest3', vitest3, { 'package.json': '{"private":true,"type":"module"}', 'v3.test.js': VITEST });
    suite('vitest4', vitest4, { 'package.json': '{"private":true,"type":"module"}', 'v4.test.js': VITEST });
    suite('jest', jest, { 'package.json': '{"private":true}', 'shop.test.js': JEST });
    const hasPytest = !('missing' in pytestVersion());
    if (hasPytest) suite('pytest', undefined, { 'test_shot.py': PYTEST });
    const configPath = path.join(root, 'runset.config.yaml');
    writeFileSync(
      configPath,
      [
        'environments: { main: {} }',
        'tests:',
        '  - { name: cucumber, type: cucumber, dir: cucumber }',
        '  - { name: vitest3, type: vitest, dir: vitest3 }',
        '  - { name: vitest4, type: vitest, dir: vitest4 }',
        '  - { name: jest, type: jest, dir: jest, workers: 1, artifacts: ["screenshots/**"] }',
        ...(hasPytest ? [`  - { name: pytest, type: pytest, dir: pytest, python: ${PYTHON} }`] : []),
        '',
      ].join('\n'),
    );
    server = await startRunset({ configPath, args: ['--workers', '2'] });
    const created = await api(server, 'POST', '/v0/test-run-sets', { body: { env: 'main' } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.testRunSetId as string;
    await waitForSet(server, id, 180_000);
    members = (await api<{ testRuns: Member[] }>(server, 'GET', `/v0/test-run-sets/${id}/test-runs`)).body.testRuns;
  });
  after(async () => {
    await server?.stop();
  });

  const member = (name: string): Member => {
    const found = members.find((m) => m.name === name);
    assert.ok(found, `no member ${name} among ${members.map((m) => m.name).join(', ')}`);
    return found;
  };
  const download = async (m: Member, name: string): Promise<{ type: string | null; bytes: Buffer }> => {
    const artifact = m.artifacts.find((a) => a.name === name);
    assert.ok(artifact, `${m.name} has no artifact ${name}; it has ${JSON.stringify(m.artifacts)} and says ${m.output}`);
    const res = await fetch(server!.url.replace(/\/api$/, '') + artifact.url, { headers: { authorization: `Bearer ${server!.apiKey}` } });
    assert.equal(res.status, 200);
    return { type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
  };

  test('Cucumber: an attached image is an artifact, a log line is output', async (t) => {
    if (unreachable !== undefined) return t.skip(unreachable);
    const m = member('features/shop.feature › shop › pays by card');
    assert.equal(m.status, 'SUCCESS');
    assert.deepEqual(m.artifacts.map((a) => a.name), ['card.png']);
    const shot = await download(m, 'card.png');
    assert.equal(shot.type, 'image/png');
    assert.deepEqual(shot.bytes, Buffer.from(PNG, 'base64'));
    assert.match(m.output ?? '', /took the screenshot/);
  });

  for (const file of ['v3.test.js', 'v4.test.js']) {
    test(`Vitest (${file}): an annotation's file and an annotation's bytes are artifacts, named by their messages`, async (t) => {
      if (unreachable !== undefined) return t.skip(unreachable);
      const m = member(`${file} › annotates`);
      assert.equal(m.status, 'SUCCESS', m.output ?? '');
      assert.deepEqual(m.artifacts.map((a) => a.name).sort(), ['note.txt', 'page.html']);
      assert.equal((await download(m, 'page.html')).bytes.toString(), '<p>the page</p>');
      assert.equal((await download(m, 'note.txt')).bytes.toString(), 'plain words');
    });
  }

  test('pytest: a file printed as [[ATTACHMENT|path]] is an artifact; a symbolic link is not kept, and the output says why', async (t) => {
    if (unreachable !== undefined) return t.skip(unreachable);
    const missing = pytestVersion();
    if ('missing' in missing) return t.skip(missing.missing);
    const m = member('test_shot.py::test_screenshot');
    assert.equal(m.status, 'SUCCESS', m.output ?? '');
    assert.deepEqual((await download(m, 'shot.png')).bytes, Buffer.from(PNG, 'base64'));
    const planted = member('test_shot.py::test_planted_link');
    assert.deepEqual(planted.artifacts, []);
    assert.match(planted.output ?? '', /artifact hostname\.txt not kept: it is a symbolic link/);
  });

  test('Jest with artifacts: each written file goes to the test it names, the rest to the failure; a symbolic link is not matched', async (t) => {
    if (unreachable !== undefined) return t.skip(unreachable);
    const paid = member('shop.test.js › checkout › pays by card');
    assert.equal(paid.status, 'SUCCESS');
    assert.deepEqual(paid.artifacts.map((a) => a.name), ['checkout-pays-by-card.png']);
    assert.equal((await download(paid, 'checkout-pays-by-card.png')).type, 'image/png');
    const refunds = member('shop.test.js › checkout › refunds');
    assert.equal(refunds.status, 'FAIL');
    assert.deepEqual(refunds.artifacts.map((a) => a.name).sort(), ['checkout-refunds.txt', 'unnamed.txt']);
    assert.equal((await download(refunds, 'unnamed.txt')).bytes.toString(), 'whose is this');
  });
});
