/** Which Playwright runs a suite: its own @playwright/test when it has one, else runset's, lent through module paths. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { locatePlaywright, playwrightEnvironment } from '../../src/executors/playwright/locate.js';
import { tempDir } from '../helpers/server.js';

const RUNSET_MODULES = fileURLToPath(new URL('../../../node_modules', import.meta.url));

test('a suite without @playwright/test borrows runset\'s, for CommonJS (NODE_PATH) and ES modules (a resolve hook)', () => {
  const suite = tempDir('runset-locate-');
  const install = locatePlaywright(suite);
  assert.equal(install.own, false);
  assert.equal(install.cli, path.join(RUNSET_MODULES, '@playwright', 'test', 'cli.js'));
  const env = playwrightEnvironment(install, suite, { BASE_URL: 'http://x' });
  assert.equal(env.BASE_URL, 'http://x');
  assert.equal(env.NODE_PATH?.split(path.delimiter)[0], RUNSET_MODULES);
  assert.match(env.NODE_OPTIONS ?? '', /--import=file:\/\/\S+\/esm-fallback\.js/);
});

test('a suite with its own @playwright/test uses it, and no module paths are added', () => {
  const suite = tempDir('runset-locate-');
  mkdirSync(path.join(suite, 'node_modules', '@playwright'), { recursive: true });
  symlinkSync(path.join(RUNSET_MODULES, '@playwright', 'test'), path.join(suite, 'node_modules', '@playwright', 'test'));
  const install = locatePlaywright(path.join(suite));
  assert.equal(install.own, true);
  assert.equal(install.cli, path.join(realpathSync(path.join(suite, 'node_modules', '@playwright', 'test')), 'cli.js'));
  const env = playwrightEnvironment(install, suite, {});
  assert.equal(env.NODE_OPTIONS, process.env.NODE_OPTIONS);
  assert.equal(env.PATH?.split(path.delimiter)[0], path.join(suite, 'node_modules', '.bin'), 'the suite\'s tools come first on PATH');
});

test('runset\'s own settings never reach test code', () => {
  process.env.RUNSET_DATABASE_URL_FOR_THIS_TEST = 'postgres://secret';
  try {
    const suite = tempDir();
    const env = playwrightEnvironment(locatePlaywright(suite), suite, {});
    assert.equal(env.RUNSET_DATABASE_URL_FOR_THIS_TEST, undefined);
  } finally {
    delete process.env.RUNSET_DATABASE_URL_FOR_THIS_TEST;
  }
});
