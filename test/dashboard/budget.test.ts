/**
 * The dashboard's weight budget: the page's JS + CSS at most 150 KB gzipped
 * (as built for the package, measured at gzip's default level, a little more
 * than the server's level-9 copy). Also: the build is self-contained.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { DEFAULT_ASSETS_DIR, loadManifest } from '../../src/dashboard/serve.js';
import { ensureDashboardBuilt } from '../helpers/dashboard.js';

const BUDGET_BYTES = 150_000;

before(async () => {
  await ensureDashboardBuilt();
});

test('the page JS + CSS is within 150 KB gzipped', (t) => {
  const manifest = loadManifest(DEFAULT_ASSETS_DIR);
  assert.ok(manifest, 'dist/dashboard/manifest.json exists after the build');
  const sizes = [manifest.js, manifest.css].map((name) => {
    const raw = readFileSync(path.join(DEFAULT_ASSETS_DIR, 'assets', name));
    return { name, raw: raw.byteLength, gzip: gzipSync(raw).byteLength };
  });
  const total = sizes.reduce((sum, s) => sum + s.gzip, 0);
  t.diagnostic(`dashboard assets: ${sizes.map((s) => `${s.name} ${s.raw} B (gzip ${s.gzip} B)`).join(', ')}; total gzip ${total} B of ${BUDGET_BYTES}`);
  assert.ok(total <= BUDGET_BYTES, `JS + CSS is ${total} bytes gzipped; the budget is ${BUDGET_BYTES}`);
});

test('the built assets load nothing from the network', () => {
  const manifest = loadManifest(DEFAULT_ASSETS_DIR)!;
  const css = readFileSync(path.join(DEFAULT_ASSETS_DIR, 'assets', manifest.css), 'utf8');
  const js = readFileSync(path.join(DEFAULT_ASSETS_DIR, 'assets', manifest.js), 'utf8');
  assert.ok(!/@import|url\(\s*['"]?(https?:)?\/\//.test(css), 'no remote CSS import, font or image');
  assert.ok(!/\bimport\s*\(?\s*['"]https?:/.test(js) && !/\bfrom\s*['"]https?:/.test(js), 'no remote module import');
});
