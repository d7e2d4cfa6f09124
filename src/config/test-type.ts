/**
 * What every kind of test declares to the config loader (one entry of the table
 * in ./suite-test-types.ts per `type:`), apart from the table so that each
 * kind's own file (./suite-playwright.ts) can implement it without importing
 * the table that lists it.
 */
import type { TProperties } from 'typebox';
import type { TestCommon, TestSpec } from '../core/types.js';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fail, type DocPath } from './suite-error.js';

export interface BuildContext {
  /** Absolute folder of the config file: relative paths in a test start here. */
  dir: string;
  /** Path of the test in the document (`["tests", 3]`), for failures found while building. */
  path: DocPath;
  /** Where files are looked up; default the local disk. An uploaded version is checked against its archive's list instead. */
  files?: SuiteFiles;
  /** When set, every path a test names must resolve inside this folder (an uploaded version's root). */
  root?: string;
}

/** The files a config's paths are checked against. */
export interface SuiteFiles {
  isFolder(absolute: string): boolean;
  isFile(absolute: string): boolean;
}

export const DISK_FILES: SuiteFiles = Object.freeze({
  isFolder: (absolute: string) => existsSync(absolute) && statSync(absolute).isDirectory(),
  isFile: (absolute: string) => existsSync(absolute) && statSync(absolute).isFile(),
});

/** `given` resolved from the config's folder; outside `ctx.root` (when set) is a failure at `at`. */
export function resolveTestPath(ctx: BuildContext, at: DocPath, given: string): string {
  const absolute = path.resolve(ctx.dir, given);
  if (ctx.root !== undefined) {
    const inside = path.relative(ctx.root, absolute);
    if (inside === '..' || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside)) {
      fail(at, `${JSON.stringify(given)} is outside the suite's folder`, "a path inside the uploaded suite's folder (relative to its runset.config.yaml)");
    }
  }
  return absolute;
}

/** A file or glob a test writes (`junit:`, `artifacts:`), which must stay inside `folder`'s tree: no absolute path, no `..`. */
export function checkInsideGlob(at: DocPath, given: string, folder: string, example: string): void {
  if (path.isAbsolute(given) || given.split(/[\\/]/).includes('..')) {
    fail(at, `${JSON.stringify(given)} leaves ${folder}`, `a path or glob relative to ${folder}, without "..", such as ${JSON.stringify(example)}`);
  }
}

/** A string of a test that is substituted at run time, with its path inside the test. */
export interface TemplatedText {
  path: DocPath;
  text: string;
}

export interface TestTypeDefinition<S extends TestSpec = TestSpec> {
  /** The keys this type accepts besides the common ones. */
  readonly properties: TProperties;
  /** Unset timeoutSeconds and retries are the suite's own (its runner applies them), not runset's defaults. */
  readonly suiteOwnsTimings?: boolean;
  /** Checks that deserve a better message than the schema's, run before it. */
  precheck?(raw: Readonly<Record<string, unknown>>, ctx: BuildContext): void;
  /** Builds the spec from an entry that passed the schema; `fail()`s on semantic errors. */
  build(raw: Readonly<Record<string, unknown>>, common: TestCommon, ctx: BuildContext): S;
  /** Strings holding `{{NAME}}` placeholders, checked against the environments' variables at load. */
  templated?(spec: S): TemplatedText[];
}
