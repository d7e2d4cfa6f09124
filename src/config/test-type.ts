/**
 * What every kind of test declares to the config loader (one entry of the table
 * in ./suite-test-types.ts per `type:`), apart from the table so that each
 * kind's own file (./suite-playwright.ts) can implement it without importing
 * the table that lists it.
 */
import type { TProperties } from 'typebox';
import type { TestCommon, TestSpec } from '../core/types.js';
import type { DocPath } from './suite-error.js';

export interface BuildContext {
  /** Absolute folder of the config file: relative paths in a test start here. */
  dir: string;
  /** Path of the test in the document (`["tests", 3]`), for failures found while building. */
  path: DocPath;
}

/** A string of a test that is substituted at run time, with its path inside the test. */
export interface TemplatedText {
  path: DocPath;
  text: string;
}

export interface TestTypeDefinition<S extends TestSpec = TestSpec> {
  /** The keys this type accepts besides the common ones. */
  readonly properties: TProperties;
  /** Checks that deserve a better message than the schema's, run before it. */
  precheck?(raw: Readonly<Record<string, unknown>>, ctx: BuildContext): void;
  /** Builds the spec from an entry that passed the schema; `fail()`s on semantic errors. */
  build(raw: Readonly<Record<string, unknown>>, common: TestCommon, ctx: BuildContext): S;
  /** Strings holding `{{NAME}}` placeholders, checked against the environments' variables at load. */
  templated?(spec: S): TemplatedText[];
}
