/**
 * Installed as a package, `runset demo` runs a copy of its demo in the data
 * dir (src/cli/demo.ts demoConfig). The copy replaces only a folder runset made:
 * a folder of the user's under that name is never removed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { demoConfig } from '../../src/cli/demo.js';

function installedDemo(root: string): string {
  const demo = path.join(root, 'node_modules', 'runset', 'examples', 'demo');
  mkdirSync(path.join(demo, 'node_modules', 'left-out'), { recursive: true });
  writeFileSync(path.join(demo, 'runset.config.yaml'), 'environments: {}\n');
  return demo;
}

test('installed, the demo runs from a copy in the data dir, replaced at each start and without node_modules', (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'runset-demo-copy-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const demo = installedDemo(root);
  const data = path.join(root, 'data');
  const config = demoConfig(data, demo);
  assert.equal(config, path.join(data, '.runset-demo', 'runset.config.yaml'));
  assert.ok(!existsSync(path.join(data, '.runset-demo', 'node_modules')));
  writeFileSync(path.join(data, '.runset-demo', 'stale.txt'), 'from an earlier start');
  assert.equal(demoConfig(data, demo), config);
  assert.ok(!existsSync(path.join(data, '.runset-demo', 'stale.txt')), 'an earlier copy is replaced');
});

test("a folder of the user's where the copy would go is refused, and left as it was", (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'runset-demo-copy-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const demo = installedDemo(root);
  const data = path.join(root, 'data');
  mkdirSync(path.join(data, '.runset-demo'), { recursive: true });
  writeFileSync(path.join(data, '.runset-demo', 'mine.txt'), 'the user wrote this');
  assert.throws(() => demoConfig(data, demo), /\.runset-demo exists and was not made by runset demo.*another --data-dir/);
  assert.equal(readFileSync(path.join(data, '.runset-demo', 'mine.txt'), 'utf8'), 'the user wrote this');
  mkdirSync(path.join(data, 'demo'));
  writeFileSync(path.join(data, 'demo', 'mine.txt'), 'a folder named demo is not touched either');
  rmSync(path.join(data, '.runset-demo'), { recursive: true });
  demoConfig(data, demo);
  assert.ok(existsSync(path.join(data, 'demo', 'mine.txt')));
});

test('from a clone the demo runs in place: nothing is copied', () => {
  const demo = path.join(tmpdir(), 'runset-clone', 'examples', 'demo');
  assert.equal(demoConfig('/nonexistent-data', demo), path.join(demo, 'runset.config.yaml'));
});
