/**
 * src/core/typebox.ts is TypeBox's one door, and `npm run build` replaces its
 * output with one bundled module (src/core/door-bundles.ts). The bundle must
 * be the same door: the same exports, no import of TypeBox's own modules left,
 * and one TypeBox inside (a schema its `Type` builds is one its `Compile` and
 * `Value` know).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as door from '../../src/core/typebox.js';
import { buildDoorBundle, DOORS } from '../../src/core/door-bundles.js';

test('the bundled TypeBox exports what src/core/typebox.ts does, from one module', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'runset-typebox-'));
  try {
    const outfile = path.join(dir, 'typebox.mjs');
    await buildDoorBundle(DOORS.find((d) => d.source === 'src/core/typebox.ts')!, outfile);
    const code = readFileSync(outfile, 'utf8');
    assert.doesNotMatch(code, /\bfrom\s*["']typebox/, 'the bundle still imports a TypeBox module');
    assert.doesNotMatch(code, /\bimport\s*\(\s*["']typebox/, 'the bundle still imports a TypeBox module');
    const bundled = (await import(pathToFileURL(outfile).href)) as typeof door;
    assert.deepEqual(Object.keys(bundled).sort(), Object.keys(door).sort());

    const schema = bundled.Type.Object({ name: bundled.Type.String({ minLength: 1 }), n: bundled.Type.Optional(bundled.Type.Integer()) });
    const validator = bundled.Compile(schema);
    assert.equal(validator.Check({ name: 'a', n: 2 }), true);
    assert.equal(validator.Check({ name: '', n: 2 }), false);
    assert.equal(validator.Check({ name: 'a', n: 1.5 }), false);
    assert.equal(bundled.Value.Check(schema, { name: 'b' }), true);
    assert.equal(bundled.Value.Check(schema, { n: 1 }), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
