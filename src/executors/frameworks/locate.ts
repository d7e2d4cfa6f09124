/**
 * Which copy of a framework runs a suite: the suite's own, found from its
 * folder upwards as `npx` would (node_modules/<package>), its CLI named by the
 * package's `bin`. runset lends none: a framework suite brings its framework.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FrameworkTestSpec } from '../../core/types.js';
import type { FrameworkAdapter, FrameworkInstall } from './adapter.js';

export type { FrameworkInstall } from './adapter.js';

/** The framework that runs `spec`: the adapter's own way to find it, else the suite's npm package. */
export async function locateFramework(adapter: FrameworkAdapter, spec: FrameworkTestSpec): Promise<FrameworkInstall> {
  return adapter.locate ? adapter.locate(spec) : locatePackage(adapter, spec.dir);
}

function locatePackage(adapter: FrameworkAdapter, dir: string): FrameworkInstall {
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
