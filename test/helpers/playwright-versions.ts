/**
 * The Playwright versions runset supports, each installed once from npm into a
 * cache outside git (node_modules/.cache/runset-compat/<version>) and reused by
 * later runs. Never a browser download (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1, no
 * install scripts). An install that fails (no network, unknown version) throws
 * with npm's own output: the version matrix must fail loudly, never skip.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { installLockSync } from './install-lock.js';
import { REPO_ROOT } from './server.js';

/** The oldest supported, a few between, and runset's own (package.json): keep README's range in step. */
export const OLDEST_SUPPORTED = '1.30.0';
export const COMPAT_VERSIONS: readonly string[] = [OLDEST_SUPPORTED, '1.33.0', '1.40.1', '1.49.1', bundledVersion()];

export const COMPAT_CACHE = path.join(REPO_ROOT, 'node_modules', '.cache', 'runset-compat');

/** The version of runset's own @playwright/test (the newest it is tested with). */
export function bundledVersion(): string {
  return (JSON.parse(readFileSync(path.join(REPO_ROOT, 'node_modules', '@playwright', 'test', 'package.json'), 'utf8')) as { version: string }).version;
}

/** The node_modules folder holding @playwright/test at `version`, installed from npm on first use. */
export function playwrightModules(version: string): string {
  if (version === bundledVersion()) return path.join(REPO_ROOT, 'node_modules');
  const dir = path.join(COMPAT_CACHE, version);
  const modules = path.join(dir, 'node_modules');
  // A test file running at the same time may be installing it: wait for that install, not a second one.
  const release = installLockSync(dir, () => installedVersion(modules) === version);
  if (!release) return modules;
  try {
    return install(version, dir, modules);
  } finally {
    release();
  }
}

function install(version: string, dir: string, modules: string): string {
  // Installed beside, then moved in place: an interrupted install never looks complete.
  const staging = `${dir}.installing-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    execFileSync('npm', ['install', '--prefix', staging, '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', `@playwright/test@${version}`], {
      env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 300_000,
    });
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    const e = error as { stderr?: Buffer; message: string };
    const said = (e.stderr?.toString() ?? '').split('\n').filter((line) => line.startsWith('npm error')).join('\n');
    throw new Error(`cannot install @playwright/test@${version} from npm (is the npm registry reachable?): ${said || e.stderr?.toString().trim() || e.message}`);
  }
  const got = installedVersion(path.join(staging, 'node_modules'));
  if (got !== version) throw new Error(`npm installed @playwright/test ${got ?? 'nothing'} instead of ${version} into ${staging}`);
  // Test files run in parallel may install the same version at once: the first
  // one in place wins, and a finished install is never removed from under another.
  if (installedVersion(modules) !== version) {
    rmSync(dir, { recursive: true, force: true }); // an unfinished one from an older layout
    try {
      renameSync(staging, dir);
    } catch (error) {
      if (installedVersion(modules) !== version) throw error;
    }
  }
  rmSync(staging, { recursive: true, force: true });
  return modules;
}

function installedVersion(modules: string): string | undefined {
  const manifest = path.join(modules, '@playwright', 'test', 'package.json');
  if (!existsSync(manifest)) return undefined;
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version;
}
