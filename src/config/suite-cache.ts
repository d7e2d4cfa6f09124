/**
 * Where a worker keeps the suite versions it runs (`--suite-cache DIR`,
 * RUNSET_SUITE_CACHE) and how big that folder may grow (`--suite-cache-size`,
 * RUNSET_SUITE_CACHE_SIZE). See src/suites/cache.ts.
 *
 * Default size 5 GB: the installed dependencies of a suite of Playwright tests (browsers are
 * not downloaded: runset runs an installed one) take 100-300 MB and an
 * unpacked version a few MB, so 5 GB keeps some fifteen lockfiles' installs and
 * hundreds of versions warm (a busy day of pull requests, where lockfiles
 * change far less often than tests), a small part of a CI runner's disk.
 */
import { homedir } from 'node:os';
import path from 'node:path';
import type { RunAsUser } from '../executors/run-as.js';
import { parseSizeOption, type SuiteCacheSettings } from './options.js';

export const DEFAULT_SUITE_CACHE_BYTES = 5 * 1024 ** 3;
/** Under --run-as the cache must be reachable by the test user; root's home (0700) is not. */
const RUN_AS_SUITE_CACHE = '/var/cache/runset/suites';

/** `--suite-cache` and `--suite-cache-size`, checked; defaults where unset. */
export function parseSuiteCacheOptions(dir: string | undefined, size: string | undefined, runAs: RunAsUser | undefined, env: NodeJS.ProcessEnv = process.env): SuiteCacheSettings {
  return { dir: dir ? path.resolve(dir) : defaultSuiteCacheDir(runAs, env), maxBytes: size ? parseByteSize(size) : DEFAULT_SUITE_CACHE_BYTES };
}

export function defaultSuiteCacheDir(runAs: RunAsUser | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (runAs) return RUN_AS_SUITE_CACHE;
  return path.join(env.XDG_CACHE_HOME || path.join(env.HOME || homedir(), '.cache'), 'runset', 'suites');
}

/** "5GB", "500 MB", "1.5gb", "1048576" (bytes; units of 1024): at least 1MB. */
export function parseByteSize(text: string): number {
  return parseSizeOption('--suite-cache-size (RUNSET_SUITE_CACHE_SIZE)', text, { minBytes: 1024 ** 2, example: '5GB, 500MB' });
}
