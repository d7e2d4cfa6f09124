/**
 * The config keys of the pytest and Newman entries (their adapters'
 * `properties`): each framework's own key is accepted on its entry only, a
 * Newman entry needs a collection file that exists, and `retries` on Newman
 * (which has none) is refused saying so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, parseSuiteConfig } from '../../src/config/suite.js';
import type { FrameworkTestSpec } from '../../src/core/types.js';

function load(entry: string): FrameworkTestSpec {
  const root = mkdtempSync(path.join(tmpdir(), 'runset-fw-config-'));
  mkdirSync(path.join(root, 'suite'));
  writeFileSync(path.join(root, 'suite', 'shop.json'), '{}');
  const config = parseSuiteConfig(`environments:\n  staging: { variables: {} }\ntests:\n  - ${entry}\n`, path.join(root, 'runset.config.yaml'));
  return config.tests[0] as FrameworkTestSpec;
}

function problem(entry: string): string {
  try {
    load(entry);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

test('pytest: python is its own key, kept as written; retries are handed to it', () => {
  const spec = load('{ name: qa, type: pytest, dir: suite, python: /usr/bin/python3, retries: 2 }');
  assert.equal(spec.python, '/usr/bin/python3');
  assert.equal(spec.retries, 2);
  assert.equal(spec.retriesOverride, true);
  assert.equal(load('{ name: qa, type: pytest, dir: suite }').python, undefined);
  assert.match(problem('{ name: api, type: vitest, dir: suite, python: python3 }'), /python/);
});

test('Newman: a collection file is required and must exist; retries are refused', () => {
  assert.equal(load('{ name: api, type: newman, dir: suite, collection: shop.json }').collection, 'shop.json');
  assert.match(problem('{ name: api, type: newman, dir: suite }'), /collection/);
  assert.match(problem('{ name: api, type: newman, dir: suite, collection: gone.json }'), /"gone\.json" is not a file/);
  assert.match(problem('{ name: api, type: newman, dir: suite, collection: shop.json, retries: 1 }'), /Newman takes no retries .*Newman has none/);
});
