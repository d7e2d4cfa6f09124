/**
 * The client never loads server code (CONVENTIONS: "the client never imports
 * server code"). Checked on the compiled output, which is what users load:
 * a type-only import (src/core/errors.ts) is erased there and allowed; a
 * runtime import of anything outside the list below fails this test, with the
 * chain of files that led to it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const DIST_SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const ALLOWED_CORE = new Set(['core/typebox.js', 'core/wire.js', 'core/states.js', 'core/starts.js', 'core/duration.js']);
/** Third-party packages the client may load: the schema library of wire.ts, and the JUnit writer. */
const ALLOWED_PACKAGES = new Set(['typebox', 'xmlbuilder2']);

const SPECIFIERS = [
  /\b(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g,
  /\bimport\s*['"]([^'"]+)['"]/g,
  /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
];

function specifiersOf(file: string, patterns: readonly RegExp[] = SPECIFIERS): string[] {
  const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return patterns.flatMap((re) => [...code.matchAll(re)].map((m) => m[1] ?? ''));
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? '');
}

/** Every module reachable from `entry`, as paths relative to dist/src (files) or package names. */
function walk(entry: string, root = DIST_SRC): { modules: Map<string, string[]>; violations: string[] } {
  const modules = new Map<string, string[]>();
  const violations: string[] = [];
  const queue: Array<{ file: string; chain: string[] }> = [{ file: entry, chain: [] }];
  while (queue.length > 0) {
    const { file, chain } = queue.shift()!;
    const rel = path.relative(root, file).split(path.sep).join('/');
    if (modules.has(rel)) continue;
    const here = [...chain, rel];
    modules.set(rel, here);
    if (!rel.startsWith('client/') && !ALLOWED_CORE.has(rel)) {
      violations.push(here.join(' → '));
      continue;
    }
    for (const specifier of specifiersOf(file)) {
      if (specifier.startsWith('.')) {
        queue.push({ file: path.resolve(path.dirname(file), specifier), chain: here });
      } else if (specifier.startsWith('node:') || builtinModules.includes(specifier)) {
        modules.set(specifier, [...here, specifier]);
      } else {
        const name = packageName(specifier);
        modules.set(name, [...here, name]);
        if (!ALLOWED_PACKAGES.has(name)) violations.push([...here, specifier].join(' → '));
      }
    }
  }
  return { modules, violations };
}

for (const entry of ['client/index.js', 'client/trigger.js']) {
  test(`${entry} reaches only client code, wire/states/starts/duration and allowed packages`, () => {
    const { modules, violations } = walk(path.join(DIST_SRC, entry));
    assert.deepEqual(violations, []);
    assert.ok(modules.size > 3, 'the walk followed imports');
  });
}

test('the SDK entry stays light: no report writers, no XML library', () => {
  const { modules } = walk(path.join(DIST_SRC, 'client/index.js'));
  assert.ok(!modules.has('xmlbuilder2'), `xmlbuilder2 reached via ${modules.get('xmlbuilder2')?.join(' → ')}`);
  assert.ok(![...modules.keys()].some((m) => m.startsWith('client/reports/')));
});

test('the walker catches server code and unlisted packages (self-check on a made-up tree)', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'runset-graph-'));
  mkdirSync(path.join(root, 'client'));
  mkdirSync(path.join(root, 'api'));
  writeFileSync(path.join(root, 'client/index.js'), "import { x } from './a.js';\nexport * from '../core/wire.js';\n");
  writeFileSync(path.join(root, 'client/a.js'), "import type_only from 'node:fs';\nconst m = await import('../api/app.js');\nexport { y } from 'fastify';\n");
  mkdirSync(path.join(root, 'core'));
  writeFileSync(path.join(root, 'core/wire.js'), "import { Type } from 'typebox';\n");
  writeFileSync(path.join(root, 'api/app.js'), '');
  const { violations } = walk(path.join(root, 'client/index.js'), root);
  assert.deepEqual(violations.sort(), ['client/index.js → client/a.js → api/app.js', 'client/index.js → client/a.js → fastify']);
});

/** Our modules a file loads before any of its code runs (static imports only, not `import()`), relative to dist/src. */
function staticClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift()!;
    const rel = path.relative(DIST_SRC, file).split(path.sep).join('/');
    if (seen.has(rel)) continue;
    seen.add(rel);
    for (const specifier of specifiersOf(file, SPECIFIERS.slice(0, 2))) {
      if (specifier.startsWith('.')) queue.push(path.resolve(path.dirname(file), specifier));
    }
  }
  return seen;
}

test('the CLI loads a command only when asked, and a command its heavy parts only when it runs', () => {
  // Two executors' modules are option checks, made before anything starts, of Node's built-ins only:
  // the default Chromium path, and looking up --run-as's user. config/suite-cache parses the cache flags (Node's built-ins only).
  const server = /^(main\.js|api\/|store\/|scheduler\/|dashboard\/|executors\/(?!playwright\/chromium|run-as)|config\/(suite(?!-cache)|playwright)|suites\/)/;
  for (const entry of ['cli/main.js', 'cli/trigger.js', 'cli/serve.js', 'cli/keys.js', 'cli/workers.js', 'cli/cancel.js', 'cli/demo.js', 'cli/suites.js', 'cli/check.js', 'cli/init.js']) {
    const loaded = [...staticClosure(path.join(DIST_SRC, entry))];
    assert.deepEqual(loaded.filter((m) => server.test(m)), [], `${entry} loads no server code up front`);
    // Exit codes and the --label parser: small modules that import nothing.
    const light = new Set(['client/trigger-context.js', 'client/ci-labels.js']);
    assert.deepEqual(loaded.filter((m) => m.startsWith('client/') && !light.has(m)), [], `${entry} loads no client code up front`);
  }
  assert.deepEqual([...staticClosure(path.join(DIST_SRC, 'cli/main.js'))].sort(), ['cli/commands.js', 'cli/main.js', 'core/version.js'], 'main loads command modules lazily');
});
