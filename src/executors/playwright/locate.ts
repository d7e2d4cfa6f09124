/**
 * Which Playwright runs a suite — its own @playwright/test when it has one
 * (found from the suite's folder, as `npx playwright` would), else runset's —
 * and the environment that lets a suite without one import runset's.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { suiteEnvironment, type TestProcessPolicy } from '../environment.js';
import type { FrameworkInstall } from '../frameworks/adapter.js';

/** A framework install whose `cli` is the `playwright` CLI entry (…/@playwright/test/cli.js). */
export interface PlaywrightInstall extends FrameworkInstall {
  /** True when it is the suite's own, false when runset's is lent to it. */
  own: boolean;
}

// A file: URL, so that no quoting inside NODE_OPTIONS is ever needed.
const ESM_FALLBACK = pathToFileURL(new URL('./esm-fallback.js', import.meta.url).pathname).href;

export function locatePlaywright(suiteDir: string): PlaywrightInstall {
  const fromSuite = tryResolve(createRequire(path.join(suiteDir, 'runset-resolve.js')));
  if (fromSuite) return { ...fromSuite, own: true };
  const fromRunset = tryResolve(createRequire(import.meta.url));
  if (!fromRunset) throw new Error('@playwright/test is installed neither in the suite nor with runset');
  return { ...fromRunset, own: false };
}

function tryResolve(req: NodeRequire): { cli: string; version: string } | undefined {
  try {
    const manifest = req.resolve('@playwright/test/package.json');
    const { version } = req(manifest) as { version: string };
    return { cli: path.join(path.dirname(manifest), 'cli.js'), version };
  } catch {
    return undefined;
  }
}

/**
 * The environment of a Playwright process started in `dir`: a test's
 * (../environment.ts: none of the worker's settings or credentials, the suite's
 * tools first on PATH), plus `extra`, plus — when runset lends
 * its Playwright — the module paths that let the suite's
 * `import '@playwright/test'` find it.
 */
export function playwrightEnvironment(install: PlaywrightInstall, dir: string, extra: Readonly<Record<string, string>>, policy: TestProcessPolicy = {}): NodeJS.ProcessEnv {
  const env = suiteEnvironment(dir, extra, policy);
  if (!install.own) {
    // …/node_modules/@playwright/test/cli.js → …/node_modules
    const modules = path.resolve(path.dirname(install.cli), '..', '..');
    env.NODE_PATH = [modules, env.NODE_PATH].filter(Boolean).join(path.delimiter);
    env.NODE_OPTIONS = [env.NODE_OPTIONS, `--import=${ESM_FALLBACK}`].filter(Boolean).join(' ');
  }
  return env;
}
