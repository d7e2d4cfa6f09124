/**
 * Which copy of a framework runs a suite, for every kind of listed entry: the
 * adapter's own way to find it where it has one (pytest's interpreter;
 * Playwright's, which lends runset's own to a suite without one), else the
 * suite's own, found from its folder upwards as `npx` would
 * (node_modules/<package>), its CLI named by the package's `bin`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FrameworkInstall, RunnerAdapter } from './adapter.js';

export type { FrameworkInstall } from './adapter.js';

/** The framework that runs `spec`: the adapter's own way to find it, else the suite's npm package. */
export function locateFramework<S extends { dir: string }, I extends FrameworkInstall>(adapter: RunnerAdapter<S, I> & { locate(spec: S): Promise<I> }, spec: S): Promise<I>;
export function locateFramework<S extends { dir: string }>(adapter: RunnerAdapter<S>, spec: S): Promise<FrameworkInstall>;
export async function locateFramework<S extends { dir: string }>(adapter: RunnerAdapter<S>, spec: S): Promise<FrameworkInstall> {
  return adapter.locate ? adapter.locate(spec) : locatePackage(adapter, spec.dir);
}

function locatePackage(adapter: Pick<RunnerAdapter, 'title' | 'packageName' | 'bin'>, dir: string): FrameworkInstall {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    const manifest = path.join(at, 'node_modules', adapter.packageName, 'package.json');
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string; bin?: string | Record<string, string> };
      const program = adapter.bin ?? adapter.packageName;
      const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.[program];
      if (bin === undefined) throw new Error(`${manifest} names no "${program}" program in its "bin"`);
      return { cli: path.join(path.dirname(manifest), bin), version: pkg.version ?? 'unknown' };
    }
    if (path.dirname(at) === at) break;
  }
  throw new Error(`${adapter.title} is not installed for ${dir} (no node_modules/${adapter.packageName} in it or above it): install it there, e.g. npm install --save-dev ${adapter.packageName}`);
}
