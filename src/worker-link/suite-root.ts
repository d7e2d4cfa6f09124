/**
 * Where a worker over HTTP finds the suite. A member's spec names its files by
 * absolute path on the API's machine (a Playwright entry's `dir` and `config`, a
 * framework entry's `dir`, a command's `cwd`), under the folder of the API's runset.config.yaml. A runner
 * whose checkout lies elsewhere (a CI job's workspace) says where with
 * `--suite-root DIR`: every path under the API's folder is read under DIR
 * instead. Paths outside that folder are left as they are: the config chose them.
 */
import path from 'node:path';
import type { TestSpec } from '../core/types.js';

/** `file` under `from`, moved under `to`; unchanged when it is not under `from`. */
function moved(file: string, from: string, to: string): string {
  const rel = path.relative(from, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return file;
  return path.join(to, rel);
}

/** The spec with its suite files read under `to` instead of `from` (the API's config folder). */
export function relocateSpec(spec: TestSpec, from: string, to: string): TestSpec {
  if (path.resolve(from) === path.resolve(to)) return spec;
  switch (spec.type) {
    case 'playwright':
      return { ...spec, dir: moved(spec.dir, from, to), config: moved(spec.config, from, to) };
    case 'command':
      return { ...spec, cwd: moved(spec.cwd, from, to) };
    case 'http':
      return spec;
    default: // a framework entry's case
      return { ...spec, dir: moved(spec.dir, from, to) };
  }
}
