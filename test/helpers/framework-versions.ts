/**
 * The test frameworks runset runs case by case, each version installed once
 * from npm into a cache outside git (node_modules/.cache/runset-frameworks/
 * <package>-<version>) and reused by later runs; never with install scripts.
 * An install that fails because the registry cannot be reached answers a
 * reason to skip; any other failure throws with npm's own words.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { installLock } from './install-lock.js';
import { REPO_ROOT } from './server.js';

/**
 * For each framework: an older major still in wide use, and the newest this
 * Node runs (Vitest 5 and Cucumber 13 need Node 22). Keys are `type:` names;
 * Cucumber's package is @cucumber/cucumber.
 */
export const FRAMEWORK_VERSIONS = Object.freeze({
  vitest: ['3.2.4', '4.1.12'],
  jest: ['29.7.0', '30.5.2'],
  mocha: ['10.8.2', '12.0.3'],
  cucumber: ['11.3.0', '12.9.0'],
} as const);

/** Newman (Postman collections): the last 5.x and the newest 6.x. pytest is Debian's python3-pytest, not from npm. */
export const NEWMAN_VERSIONS = Object.freeze(['5.3.2', '6.2.2'] as const);

export const FRAMEWORK_CACHE = path.join(REPO_ROOT, 'node_modules', '.cache', 'runset-frameworks');

const UNREACHABLE = /E(NOTFOUND|AI_AGAIN|CONNREFUSED|CONNRESET|TIMEDOUT|NETUNREACH)|network/;

export class RegistryUnreachable extends Error {}

/** The node_modules folder holding `pkg` at `version`, installed from npm on first use. */
export async function frameworkModules(pkg: string, version: string): Promise<string> {
  const dir = path.join(FRAMEWORK_CACHE, `${pkg}-${version}`);
  const modules = path.join(dir, 'node_modules');
  // A test file running at the same time may be installing it: wait for that install, not a second one.
  const release = await installLock(dir, () => installedVersion(modules, pkg) === version);
  if (!release) return modules;
  try {
    return await install(pkg, version, dir, modules);
  } finally {
    release();
  }
}

async function install(pkg: string, version: string, dir: string, modules: string): Promise<string> {
  // Installed beside, then moved in place: an interrupted install never looks complete.
  const staging = `${dir}.installing-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    await promisify(execFile)('npm', ['install', '--prefix', staging, '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', `${pkg}@${version}`], { timeout: 300_000 });
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    const e = error as { stderr?: string; message: string };
    const said = (e.stderr ?? '').split('\n').filter((line) => line.startsWith('npm error')).join('\n') || e.message;
    if (UNREACHABLE.test(said)) throw new RegistryUnreachable(`the npm registry is unreachable (${said.split('\n')[0]})`);
    throw new Error(`cannot install ${pkg}@${version} from npm: ${said}`);
  }
  if (installedVersion(path.join(staging, 'node_modules'), pkg) !== version) throw new Error(`npm did not install ${pkg}@${version} into ${staging}`);
  if (installedVersion(modules, pkg) !== version) {
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(staging, dir);
    } catch (error) {
      if (installedVersion(modules, pkg) !== version) throw error;
    }
  }
  rmSync(staging, { recursive: true, force: true });
  return modules;
}

function installedVersion(modules: string, pkg: string): string | undefined {
  const manifest = path.join(modules, pkg, 'package.json');
  if (!existsSync(manifest)) return undefined;
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version;
}

/**
 * Each `[package, version]` installed (cached), in order; or, when the npm
 * registry cannot be reached, why (the matrix tests then skip, saying so). Any
 * other install failure throws: the matrix must fail loudly, never skip.
 */
export async function installAll(wanted: ReadonlyArray<readonly [pkg: string, version: string]>): Promise<string[] | { unreachable: string }> {
  try {
    return await Promise.all(wanted.map(([pkg, version]) => frameworkModules(pkg, version)));
  } catch (error) {
    if (error instanceof RegistryUnreachable) return { unreachable: error.message };
    throw error;
  }
}
